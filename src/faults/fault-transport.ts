// The network faults, as a Transport decorator under the TimedTransport (so what a fault does is
// timed and counted like any request) and over the worker's real transport (so it works against
// the embedded controller and a real one alike). Each request looks up the faults active for its
// device on the worker's own clock, measured from the run's common start instant:
//
//   partition    fails at once, as a connect to an unreachable network does (ENETUNREACH)
//   dns-failure  fails at once, as a name that does not resolve (ENOTFOUND)
//   tls-failure  fails at once, as a handshake the server aborts
//   blackhole    hangs until the request timeout, then fails (timeout); nothing reaches the server
//   loss         a share of the requests behave as blackholed
//   reset        goes to the server, then the connection is reset before the answer (ECONNRESET):
//                the server acted on it, the device does not know
//   latency      waits delay ± jitter before the request goes out
//
// When several are active, failing ones win over reset, and latency comes first. A request a fault
// fails also costs its device the connection, as a failed request costs EVE's client its
// connection: devices with connections of their own (API v1, v2 per-device) connect again after
// it, resuming their TLS session; the shared v2 pool is left alone. What the controller sees of
// the old connection follows the fault (ConnectionLossHow): a reset for reset, nothing until the
// network is back for partition, blackhole and loss, a FIN for the others.
//
// It also watches recovery: a device a network fault hit, or a power loss took down, is current
// again at its first configuration answer after the window (for a power loss, to a request sent
// after the power came back, so an answer the device never saw does not count).

import type { Clock, Rng, Transport, TransportRequest, TransportResponse } from '../device/ports.js';
import { TransportError } from '../device/ports.js';
import type { FaultPlan, PlannedFault } from './fault-plan.js';
import { isNetworkFault, type NetworkFaultKind } from './fault-spec.js';
import type { WorkerTransport } from '../transport/worker-transport.js';

/** What a hung request waits for when no timeout is given: ControllerTransport's default deadline. */
export const DEFAULT_FAULT_TIMEOUT_MS = 120_000;

/** TransportError codes of the faults that fail a request without an HTTP answer. */
export const FAULT_ERROR_CODES = {
  partition: 'ENETUNREACH',
  'dns-failure': 'ENOTFOUND',
  'tls-failure': 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
  blackhole: 'timeout',
  loss: 'timeout',
  reset: 'ECONNRESET',
} as const satisfies Partial<Record<NetworkFaultKind, string>>;

/** Timers the decorator waits on (tests pass fakes). */
export interface FaultTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: FaultTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface FaultTransportOptions {
  clock: Clock;
  /** The run's start instant on `clock` (common to every worker). */
  startAtMs: number;
  /** For jitter and loss. */
  rng: Rng;
  /** How long a blackholed or lost request hangs before it times out, ms. */
  requestTimeoutMs?: number;
  timers?: FaultTimers;
}

const FAILS_AT_ONCE: readonly NetworkFaultKind[] = ['partition', 'dns-failure', 'tls-failure'];

/** Faults whose hit devices are watched for recovery: the network faults and power-loss. */
export function watchesRecovery(p: PlannedFault): boolean {
  return isNetworkFault(p.fault) || p.fault.action === 'power-loss';
}

export class FaultTransport implements Transport {
  private readonly faults: PlannedFault[];
  /** Faults whose hit devices are watched for recovery (watchesRecovery). */
  private readonly watched: PlannedFault[];
  /** Requests each fault changed, by plan id. */
  readonly requestsAffected: number[];
  /** Devices with at least one request each fault changed, by plan id. */
  readonly devicesAffected: Set<number>[];
  /** Devices a fault hit that got a configuration answer (200 or 304) after its window, by plan id
   *  (network faults and power-loss). */
  readonly recovered: Set<number>[];
  /** Longest time from a fault's end to a hit device's first configuration answer after it, ms, by plan id. */
  readonly recoveryMs: number[];
  /** A fault has hit a device: configuration answers are watched for recovery. */
  private watching = false;
  private readonly timers: FaultTimers;
  private readonly timeoutMs: number;
  /** Waits in progress (delays and hangs), so destroy() can end them. */
  private readonly waits = new Map<unknown, (err?: Error) => void>();

  constructor(
    private readonly inner: WorkerTransport,
    plan: FaultPlan,
    private readonly opts: FaultTransportOptions,
  ) {
    this.faults = plan.faults.filter((p) => isNetworkFault(p.fault));
    this.watched = plan.faults.filter(watchesRecovery);
    this.requestsAffected = plan.faults.map(() => 0);
    this.devicesAffected = plan.faults.map(() => new Set<number>());
    this.recovered = plan.faults.map(() => new Set<number>());
    this.recoveryMs = plan.faults.map(() => 0);
    this.timers = opts.timers ?? REAL_TIMERS;
    this.timeoutMs = opts.requestTimeoutMs ?? DEFAULT_FAULT_TIMEOUT_MS;
  }

  async request(req: TransportRequest): Promise<TransportResponse> {
    const active = this.activeFor(req.deviceIndex);
    if (active.length === 0) {
      if (!this.watching) return this.inner.request(req);
      const sentAt = this.elapsed();
      return this.inner.request(req).then((res) => this.noteAnswer(req, res, sentAt));
    }
    let delay = 0;
    let fail: PlannedFault | undefined;
    let hang: PlannedFault | undefined;
    let reset: PlannedFault | undefined;
    for (const p of active) {
      const f = p.fault;
      switch (f.action as NetworkFaultKind) {
        case 'latency': {
          const jitter = f.jitterMs ?? 0;
          delay += Math.max(0, (f.delayMs ?? 0) + (jitter > 0 ? this.opts.rng.range(-jitter, jitter) : 0));
          this.count(p, req);
          break;
        }
        case 'loss':
          if (!hang && this.opts.rng.next() < (f.lossShare ?? 0)) hang = p;
          break;
        case 'blackhole':
          hang ??= p;
          break;
        case 'reset':
          reset ??= p;
          break;
        default:
          if (FAILS_AT_ONCE.includes(f.action as NetworkFaultKind)) fail ??= p;
      }
    }
    if (delay > 0) await this.wait(delay);
    if (fail) {
      this.count(fail, req);
      // A partition drops the device's FIN too; a name that does not resolve or a refused handshake does not.
      this.inner.connectionLost?.(req.deviceIndex, fail.fault.action === 'partition' ? 'unreachable' : 'closed');
      throw this.error(fail, req, 'fault injected');
    }
    if (hang) {
      this.count(hang, req);
      await this.wait(this.timeoutMs);
      this.inner.connectionLost?.(req.deviceIndex, 'unreachable');
      throw this.error(hang, req, `no HTTP answer within ${this.timeoutMs} ms (fault injected)`);
    }
    if (reset) {
      this.count(reset, req);
      // The request reaches the server; whatever it answers is lost with the connection.
      await this.inner.request(req).catch(() => undefined);
      this.inner.connectionLost?.(req.deviceIndex, 'reset');
      throw this.error(reset, req, 'connection reset after the request was sent (fault injected)');
    }
    const sentAt = this.elapsed();
    return this.inner.request(req).then((res) => this.noteAnswer(req, res, sentAt));
  }

  /** A power loss (planned fault `p`) took device `index` down: watch for it to be current again. */
  powerLost(p: PlannedFault, index: number): void {
    this.devicesAffected[p.id]!.add(index);
    if (Number.isFinite(p.endMs)) this.watching = true;
  }

  /** ms since the run's start on the worker's clock. */
  private elapsed(): number {
    return this.opts.clock.now() - this.opts.startAtMs;
  }

  private count(p: PlannedFault, req: TransportRequest): void {
    this.requestsAffected[p.id]!++;
    this.devicesAffected[p.id]!.add(req.deviceIndex);
    if (Number.isFinite(p.endMs)) this.watching = true;
  }

  /** A configuration answer after a fault's window: the device it hit is current again. */
  private noteAnswer(req: TransportRequest, res: TransportResponse, sentAt: number): TransportResponse {
    if (req.endpoint !== 'config' || (res.status !== 200 && res.status !== 304)) return res;
    const t = this.elapsed();
    for (const p of this.watched) {
      if (t < p.endMs || !this.devicesAffected[p.id]!.has(req.deviceIndex) || this.recovered[p.id]!.has(req.deviceIndex)) continue;
      // A powered-off device saw no answer to what it sent before the loss.
      if (p.fault.action === 'power-loss' && sentAt < p.endMs) continue;
      this.recovered[p.id]!.add(req.deviceIndex);
      if (t - p.endMs > this.recoveryMs[p.id]!) this.recoveryMs[p.id] = t - p.endMs;
    }
    return res;
  }

  /** Faults active now for fleet index `index`. */
  private activeFor(index: number): PlannedFault[] {
    if (this.faults.length === 0) return [];
    const t = this.opts.clock.now() - this.opts.startAtMs;
    const out: PlannedFault[] = [];
    for (const p of this.faults) if (t >= p.startMs && t < p.endMs && p.selects(index)) out.push(p);
    return out;
  }

  private error(p: PlannedFault, req: TransportRequest, what: string): TransportError {
    const code = FAULT_ERROR_CODES[p.fault.action as keyof typeof FAULT_ERROR_CODES];
    return new TransportError(`${req.method} ${req.path} (device ${req.deviceIndex}, ${req.endpoint}): ${p.fault.action}: ${what} (${code})`, code);
  }

  private wait(ms: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const handle = this.timers.set(() => {
        this.waits.delete(handle);
        resolve();
      }, ms);
      this.waits.set(handle, (err) => (err ? reject(err) : resolve()));
    });
  }

  stats(): { running: number; queued?: number } {
    const s = this.inner.stats?.();
    return s ? { ...s, running: s.running + this.waits.size } : { running: this.waits.size };
  }

  async close(): Promise<void> {
    await (this.inner.close?.() ?? Promise.resolve());
  }

  /** Ends every wait now (the requests fail with 'closed'), then destroys the inner transport. */
  async destroy(): Promise<void> {
    for (const [handle, end] of this.waits) {
      this.timers.clear(handle);
      end(new TransportError('fault wait ended: the transport was destroyed (closed)', 'closed'));
    }
    this.waits.clear();
    await (this.inner.destroy?.() ?? this.inner.close?.() ?? Promise.resolve());
  }
}
