// The worker side of local profile servers: what each device gets for its LPS agent and radios
// (DeviceLpsPorts), one plain-HTTP transport per LPS base URL shared by the worker's devices and
// timed like the controller transport, and the LPS figures the worker reports each second (agent
// counters, token rejections, devices by radio and GNSS state).
//
// An embedded LPS names each device by the Host header '<uuid>.lps.invalid:<port>' (lps-site.ts,
// deviceLpsAddress); such a name does not resolve, so it is reached on 127.0.0.1 at that port and
// the Host header keeps the name. Any other address is used as it is (http://host:port, EVE's
// scheme for an LPS).

import type { GnssGaugeState, RadioGaugeState } from '../device/radio/device-radios.js';
import type { LpsAddress } from '../device/lps/lps-address.js';
import { LPS_ENDPOINT_KEYS, LpsAgentStats } from '../device/lps/lps-endpoints.js';
import type { DeviceLpsPorts } from '../device/lps/lps-ports.js';
import type { Clock, Millis, Transport } from '../device/ports.js';
import { SeededRng } from '../device/core/seeded-rng.js';
import type { LpsThrottleRule } from '../scenario/lps/lps-scenario-types.js';
import type { Scenario } from '../scenario/scenario-types.js';
import { ControllerTransport } from '../transport/controller-transport.js';
import type { RequestObserver } from '../transport/request-observer.js';
import { TimedTransport } from '../transport/timed-transport.js';
import type { FleetLayout } from './fleet-layout.js';

/** Host suffix of the addresses an embedded LPS hands out (src/servers/lps/lps-site.ts). */
export const EMBEDDED_LPS_HOST_SUFFIX = '.lps.invalid';
/** Devices by radio and GNSS state are counted at most this often (they cost a few hashes each). */
const GAUGE_PERIOD_MS = 5_000;

/** What a device exposes for the LPS gauges (VirtualDevice.lps). */
export interface LpsGaugeSource {
  radioGauge(now: Millis): RadioGaugeState | undefined;
  gnssGauge(now: Millis): GnssGaugeState | undefined;
}

/** A worker's LPS figures: cumulative counters and current gauges. */
export interface LpsWorkerFigures {
  /** Agent counters over the worker's devices since the start (absolute). */
  agent: {
    appCommandsAccepted: number;
    appCommandsSkipped: number;
    appCommandsCompleted: number;
    deviceCommandsAccepted: number;
    deviceCommandsRefused: number;
    radioChangesApplied: number;
    radioChangesFailed: number;
    radioPostsSuppressed: number;
    locationPostsThrottled: number;
  };
  /** Answers refused for a wrong server_token, by LPS endpoint key (absolute). */
  tokenRejected: Record<string, number>;
  /** Devices by the state of their first modem (or radio-silence change), and by GNSS fix. */
  radio: Record<string, number>;
  gnss: Record<string, number>;
}

/** Base URL that reaches an LPS address from this machine. */
export function lpsBaseUrl(a: LpsAddress): string {
  return a.host.endsWith(EMBEDDED_LPS_HOST_SUFFIX) ? `http://127.0.0.1:${a.port}` : a.baseUrl;
}

export class LpsFleet {
  readonly stats = new LpsAgentStats();
  private readonly transports = new Map<string, { inner: ControllerTransport; timed: TimedTransport }>();
  private readonly observers: RequestObserver[];
  private readonly ruleOfGroup: (LpsThrottleRule | undefined)[];
  private gauges: { at: Millis; radio: Record<string, number>; gnss: Record<string, number> } | undefined;
  /** Set when the run's duration is over: the gauges keep what they were then (devices stop after). */
  private frozen = false;

  constructor(
    private readonly scenario: Pick<Scenario, 'seed' | 'sites' | 'groups'>,
    private readonly layout: FleetLayout,
    private readonly clock: Clock,
    observers: readonly RequestObserver[],
  ) {
    this.observers = [...observers];
    this.ruleOfGroup = scenario.groups.map((g) => scenario.sites?.find((s) => s.groups.includes(g.name))?.throttleRule);
  }

  /** DeviceOptions.lps of fleet device `index`. */
  portsFor(index: number): DeviceLpsPorts {
    const rule = this.ruleOfGroup[this.layout.groupOf(index)];
    return {
      seed: this.scenario.seed,
      rng: SeededRng.create(this.scenario.seed, index, 'lps'),
      transportFor: this.transportFor,
      stats: this.stats,
      ...(rule !== undefined ? { throttleRule: rule } : {}),
    };
  }

  /** One transport per LPS base URL, shared by every device of the worker. */
  readonly transportFor = (address: LpsAddress): Transport => {
    const url = lpsBaseUrl(address);
    let t = this.transports.get(url);
    if (t === undefined) {
      // EVE's LPS client: plain HTTP, timer.send.timeout (120 s) per request.
      const inner = new ControllerTransport({ baseUrl: url, connections: 32, connectJitterMs: 0 });
      t = { inner, timed: new TimedTransport(inner, this.clock, this.observers) };
      this.transports.set(url, t);
    }
    return t.timed;
  };

  addObserver(o: RequestObserver): void {
    this.observers.push(o);
    for (const t of this.transports.values()) t.timed.addObserver(o);
  }

  removeObserver(o: RequestObserver): void {
    const i = this.observers.indexOf(o);
    if (i >= 0) this.observers.splice(i, 1);
    for (const t of this.transports.values()) t.timed.removeObserver(o);
  }

  /** Requests handed to an LPS and not yet answered (TimedTransport.inFlight). */
  awaitingAnswer(): number {
    let n = 0;
    for (const t of this.transports.values()) n += t.timed.inFlight;
    return n;
  }

  /** The run is over: requests still waiting for an answer are reported as unfinished (TimedTransport). */
  settleUnfinished(): number {
    let n = 0;
    for (const t of this.transports.values()) n += t.timed.settleUnfinished();
    return n;
  }

  /** Requests on the wire or queued now, over every LPS transport. */
  inFlight(): number {
    let n = 0;
    for (const t of this.transports.values()) {
      const s = t.inner.stats();
      n += s.running + s.queued;
    }
    return n;
  }

  /** The worker's LPS figures; undefined while no device ever talked to an LPS or has a radio. */
  figures(devices: readonly ({ lps?: LpsGaugeSource | undefined } | undefined)[], now: Millis): LpsWorkerFigures | undefined {
    if (this.gauges === undefined || (!this.frozen && now - this.gauges.at >= GAUGE_PERIOD_MS)) this.gauges = { at: now, ...countStates(devices, now) };
    const s = this.stats;
    const tokenRejected: Record<string, number> = {};
    let requests = 0;
    for (const k of LPS_ENDPOINT_KEYS) {
      const e = s.endpoints[k];
      requests += e.sent;
      if (e.tokenRejected > 0) tokenRejected[k] = e.tokenRejected;
    }
    const g = this.gauges;
    if (requests === 0 && Object.keys(g.radio).length === 0 && Object.keys(g.gnss).length === 0) return undefined;
    return {
      agent: {
        appCommandsAccepted: s.appCommandsAccepted,
        appCommandsSkipped: s.appCommandsSkipped,
        appCommandsCompleted: s.appCommandsCompleted,
        deviceCommandsAccepted: s.deviceCommandsAccepted,
        deviceCommandsRefused: s.deviceCommandsRefused,
        radioChangesApplied: s.radioChangesApplied,
        radioChangesFailed: s.radioChangesFailed,
        radioPostsSuppressed: s.radioPostsSuppressed,
        locationPostsThrottled: s.locationPostsThrottled,
      },
      tokenRejected,
      radio: { ...g.radio },
      gnss: { ...g.gnss },
    };
  }

  /** The planned run is over: count the devices once more and keep that as the final gauge values. */
  freezeGauges(devices: readonly ({ lps?: LpsGaugeSource | undefined } | undefined)[], now: Millis): void {
    this.gauges = { at: now, ...countStates(devices, now) };
    this.frozen = true;
  }

  /** Closes every LPS connection now. */
  async destroy(): Promise<void> {
    await Promise.all([...this.transports.values()].map((t) => t.inner.destroy()));
    this.transports.clear();
  }
}

function countStates(devices: readonly ({ lps?: LpsGaugeSource | undefined } | undefined)[], now: Millis): { radio: Record<string, number>; gnss: Record<string, number> } {
  const radio: Record<string, number> = {};
  const gnss: Record<string, number> = {};
  for (const d of devices) {
    const src = d?.lps;
    if (src === undefined) continue;
    const r = src.radioGauge(now);
    if (r !== undefined) radio[r] = (radio[r] ?? 0) + 1;
    const g = src.gnssGauge(now);
    if (g !== undefined) gnss[g] = (gnss[g] ?? 0) + 1;
  }
  return { radio, gnss };
}
