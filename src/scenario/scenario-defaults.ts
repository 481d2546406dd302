// Values the loader fills in for fields a scenario file leaves out. scenarios/README.md lists the
// same table for users; change both together.

import type { AppTemplate, ArrivalSpec, GroupSpec } from './scenario-types.js';
import { EVE_LOG_QUOTA_MB } from '../device/telemetry/log-quota.js';

export const DEFAULT_SEED = 1;
/** How long devices may deliver their queues after the run's duration (scenario `gracefulStop`). */
export const DEFAULT_GRACEFUL_STOP_MS = 15_000;
export const DEFAULT_EVE_VERSION = '14.5.2-kvm-amd64';
/** What QEMU's OVMF reports as BIOS vendor-version-date (EVE's firmware version on KVM). */
export const DEFAULT_FIRMWARE_VERSION = 'EFI Development Kit II / OVMF-0.0.0-02/06/2015';

export const GROUP_DEFAULTS: Omit<GroupSpec, 'name' | 'count'> = {
  api: 'v2',
  eveVersion: DEFAULT_EVE_VERSION,
  firmwareVersion: DEFAULT_FIRMWARE_VERSION,
  preRegistered: false,
  logFormat: 'newlogs',
  logLinesPerSec: 1,
  // EVE's default newlog.gzipfiles.ondisk.maxmegabytes (eve-wire-facts §3.5, §8.3).
  logQuotaMB: EVE_LOG_QUOTA_MB,
  // EVE collects flow logs about every 120 s (eve-wire-facts §9).
  flowlogIntervalMs: 120_000,
  apps: [],
  configItems: {},
  globalProfile: '',
  hardware: { ncpu: 4, memoryMB: 8192, storageMB: 65_536, model: 'evesim-virtual', manufacturer: 'evesim' },
  appStepMs: 1000,
};

export const APP_DEFAULTS: Omit<AppTemplate, 'name'> = {
  activate: true,
  profiles: [],
  logLinesPerSec: 0.5,
  flowsPerMessage: 10,
};

/** Without an `arrival` section devices come online evenly at 20 per second. */
export const DEFAULT_ARRIVAL: ArrivalSpec = { model: 'uniform', ratePerSec: 20 };
