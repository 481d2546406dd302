// What a virtual device is told when it is created. Plain data (structured-clone safe) except the
// ports, so a shard can build it from the scenario in a worker thread.

import type { ReliableBacklog } from './core/reliable-backlog.js';
import type { DeviceDiskState } from './lifecycle/device-disk-state.js';
import type { DeviceIdentity } from '../identity/device-identity.js';
import type { DeviceLpsPorts } from './lps/lps-ports.js';
import type { Clock, Rng, Scheduler, Transport } from './ports.js';
import type { CellularSpec, GnssSpec } from './radio/radio-specs.js';
import type { LogSpill } from './telemetry/log-spill-port.js';

export interface AppSpec {
  /** Display name; the UUID comes from the controller's configuration. */
  name: string;
  /** Device log lines per second this app emits while RUNNING (newlogs or legacy app logs). */
  logLinesPerSec: number;
  /** Flow records per flowlog message while RUNNING. */
  flowsPerMessage: number;
}

export interface DeviceBehaviour {
  /** EVE release string reported in info, logs and attestation versions, e.g. "14.5.2-kvm-amd64". */
  eveVersion: string;
  /** 'newlogs' as current EVE; 'legacy' uses the protobuf /logs and app /logs endpoints. */
  logFormat: 'newlogs' | 'legacy';
  /** Device log lines per second. */
  logLinesPerSec: number;
  /** EVE's quota for kept log files, bytes (absent: EVE's default, telemetry/log-quota.ts). */
  logQuotaBytes?: number;
  /** How often flow logs are collected, ms (EVE: about 120 s). */
  flowlogIntervalMs: number;
  /** Skip POST /register and go straight to /uuid (a pre-registered device). */
  preRegistered: boolean;
  /** Controller API the device speaks (absent: 'v2'). v1 is mutual TLS without envelopes (sender/api-v1-dialect.ts). */
  api?: 'v1' | 'v2';
  /** API v1 only: fetch the configuration with POST (default) or the deprecated GET /config. */
  v1ConfigMethod?: 'POST' | 'GET';
  /** Seconds a simulated app spends in each ZSwState step on the way to RUNNING (scaled for tests). */
  appStepMs: number;
  /** Per-app rates by display name (apps not listed use modest defaults). */
  apps?: AppSpec[];
  /** Hardware shape reported in ZInfoDevice and metrics. */
  hardware: { ncpu: number; memoryMB: number; storageMB: number; model: string; manufacturer: string };
  /** BIOS vendor-version-date, reported in quotes (ATTEST_VERSION_TYPE_FIRMWARE) and measured into PCR 0. */
  firmwareVersion?: string;
  /** Cellular modems (radio/device-radios.ts); absent: none. */
  cellular?: CellularSpec;
  /** GNSS receiver (radio/device-radios.ts); absent: none. */
  gnss?: GnssSpec;
}

export interface DeviceOptions {
  /** Index of the device in the whole fleet (stable across runs of the same scenario). */
  index: number;
  identity: DeviceIdentity;
  behaviour: DeviceBehaviour;
  /** PEM of the controller root CA the device trusts for /certs chains; empty: none was given
   *  (--insecure-skip-verify without --root-ca), the chains are not checked. */
  rootCertPem: string;
  /** The controller as the device's /config/server names it (host:port), which starts each URL of
   *  its zedcloud urlMetrics; absent: the request paths alone. */
  server?: string;
  clock: Clock;
  scheduler: Scheduler;
  transport: Transport;
  rng: Rng;
  /** Called on every lifecycle change (for the devices-by-state gauge and the progress view), with
   *  the device's index so that one function can serve a worker's devices (a closure each cost 56 B). */
  onStateChange?: (from: DeviceLifecycle, to: DeviceLifecycle, deviceIndex: number) => void;
  /** Called on every problem worth counting (bad signature, undecodable body, conformance finding). */
  onFinding?: (f: DeviceFinding) => void;
  /** A TPM 2.0 (absent: none, the device sends empty quotes). */
  tpm?: DeviceTpm;
  /** Local profile server client and radio models (lps/lps-wiring.ts); absent: the device ignores local_profile_server. */
  lps?: DeviceLpsPorts;
  /** What the device kept on disk in a run that was cut off (lifecycle/device-disk-state.ts):
   *  it boots from it as after a power failure instead of onboarding. */
  resume?: DeviceDiskState;
  /** Called whenever what the device keeps on disk changed (the fleet writes it to the state directory). */
  onDiskStateChange?: (state: DeviceDiskState, deviceIndex: number) => void;
  /** Where log files beyond the device's memory budget wait for upload (absent: all held in memory). */
  logSpill?: LogSpill;
  /** That budget: compressed log bytes the device holds in memory (default LOG_MEMORY_BUDGET_BYTES;
   *  0: every waiting file goes to logSpill, as EVE keeps them all on disk). */
  logMemoryBytes?: number;
  /** The worker's reliable-message totals, moved as this device's queues change (absent: not counted). */
  backlog?: ReliableBacklog;
}

/** What a device with a TPM is given; its software TPM is built from it and the identity's attestKey. */
export interface DeviceTpm {
  /** Measure another kernel into PCR 9 (a tampered boot). */
  tampered: boolean;
  /** EK certificate (ZCertType 12) PEM file bytes, issued by the device key (src/identity/ek-certificate.ts). */
  ekCertPem: string;
  /** The EK's TPM2B_PUBLIC, the certificate's TPM2_PUBLIC meta data. */
  ekPublicArea: Uint8Array;
}

/** Coarse lifecycle, for metrics and thresholds. */
export type DeviceLifecycle =
  | 'idle'
  | 'fetching-certs'
  | 'registering'
  | 'uuid'
  | 'attesting'
  | 'onboarded'
  | 'stopped';

export interface DeviceFinding {
  deviceIndex: number;
  endpoint: string;
  kind:
    | 'bad-signature'
    | 'unknown-signer'
    | 'bad-envelope'
    | 'undecodable-body'
    | 'undocumented-status'
    | 'wrong-content-type'
    | 'bad-certs'
    | 'conformance';
  /** What was wrong, in words: e.g. the certificate that did not chain to the given root. */
  detail: string;
  /** The HTTP status of the answer, when the finding is about one. */
  status?: number;
  /** The request's X-Request-Id, when the finding is about one request. */
  requestId?: string;
  /** The device's serial (the fleet adds it to the examples it keeps). */
  serial?: string;
  /** Not a finding about the controller: an exception in the simulator, kept as an example only. */
  simulatorError?: true;
}
