// The faults inside one worker: its transport wrapped in the FaultTransport, its skewed devices
// given their own clock, scheduler and transport, and the power-loss and tpm-reset instants
// scheduled on its own scheduler from the run's common start. At the end, what each fault did
// here (fault-tally.ts).

import type { DeviceOptions } from '../device/device-options.js';
import { SeededRng } from '../device/core/seeded-rng.js';
import type { Clock, Millis, Scheduler, Transport } from '../device/ports.js';
import type { Scenario } from '../scenario/scenario-types.js';
import { DeviceClockSkew } from './clock-skew.js';
import { FaultPlan, type PlannedFault } from './fault-plan.js';
import { isNetworkFault } from './fault-spec.js';
import type { FaultTally } from './fault-tally.js';
import { FaultTransport, watchesRecovery } from './fault-transport.js';
import type { WorkerTransport } from '../transport/worker-transport.js';

/** What a fault needs of a device (the shard's FleetDevice). */
export interface FaultableDevice {
  /** Power fails now; back after `downtimeMs`. False (or nothing, for fakes) when it was not up. */
  rebootNow(cause?: 'power-fail', downtimeMs?: number): boolean | void;
  tpmReset?(): boolean;
}


export class ShardFaults {
  readonly plan: FaultPlan;
  private transport: FaultTransport | undefined;
  private startAtMs: Millis = 0;
  /** Per fault: devices hit by power-loss / tpm-reset; requests sent on a skewed clock. */
  private readonly deviceHits: number[];
  private readonly skewedRequests: number[];
  private readonly skewedDevices: Set<number>[];

  constructor(
    scenario: Pick<Scenario, 'seed' | 'groups' | 'timeline'>,
    private readonly clock: Clock,
    private readonly workerId: number,
  ) {
    this.plan = FaultPlan.of(scenario);
    this.deviceHits = this.plan.faults.map(() => 0);
    this.skewedRequests = this.plan.faults.map(() => 0);
    this.skewedDevices = this.plan.faults.map(() => new Set<number>());
  }

  /** The worker's transport with the network faults applied and recovery from them and from power
   *  losses watched (unchanged when the scenario has neither). */
  wrapTransport<T extends WorkerTransport>(inner: T, startAtMs: Millis, seed: number): WorkerTransport {
    this.startAtMs = startAtMs;
    if (!this.plan.faults.some(watchesRecovery)) return inner;
    this.transport = new FaultTransport(inner, this.plan, {
      clock: this.clock,
      startAtMs,
      rng: SeededRng.create(seed, this.workerId, 'fault-transport'),
    });
    return this.transport;
  }

  /** A device's options with its clock skewed, when a clock-skew fault hits it. */
  deviceOptions(opts: DeviceOptions): DeviceOptions {
    const skews = this.plan.forDevice(opts.index, ['clock-skew']);
    if (skews.length === 0) return opts;
    const skew = new DeviceClockSkew(this.clock, skews, this.startAtMs);
    const transport = skew.transport(opts.transport);
    return {
      ...opts,
      clock: skew.clock,
      scheduler: skew.scheduler(opts.scheduler),
      transport: {
        request: (req) => {
          if (skew.offsetMs() !== 0) this.countSkewed(skews, req.deviceIndex);
          return transport.request(req);
        },
      },
    };
  }

  /** Schedules the power-loss and tpm-reset instants on the worker's scheduler. */
  schedule(
    scheduler: Scheduler,
    startAtMs: Millis,
    devices: { count: number; indexOf(local: number): number; device(local: number): FaultableDevice | undefined },
    onError: (index: number, what: string, err: unknown) => void,
  ): void {
    for (const p of this.plan.faults) {
      const kind = p.fault.action;
      if (kind !== 'power-loss' && kind !== 'tpm-reset') continue;
      scheduler.at(startAtMs + p.startMs, () => {
        for (let local = 0; local < devices.count; local++) {
          const index = devices.indexOf(local);
          if (!p.selects(index)) continue;
          const d = devices.device(local);
          if (!d) continue;
          try {
            if (kind === 'power-loss') {
              if (d.rebootNow('power-fail', p.endMs - p.startMs) === false) continue;
              this.deviceHits[p.id]!++;
              this.transport?.powerLost(p, index);
            } else if (d.tpmReset?.()) this.deviceHits[p.id]!++;
          } catch (err) {
            onError(index, kind, err);
          }
        }
      });
    }
  }

  /** What each fault did in this worker; `indices` are the worker's fleet indices. */
  tallies(indices: Iterable<number>): FaultTally[] | undefined {
    if (this.plan.empty) return undefined;
    const devices = this.plan.faults.map(() => 0);
    for (const i of indices) for (const p of this.plan.faults) if (p.selects(i)) devices[p.id]!++;
    return this.plan.faults.map((p): FaultTally => {
      const t = this.transport;
      const tally: FaultTally = isNetworkFault(p.fault)
        ? { id: p.id, devices: devices[p.id]!, devicesHit: t?.devicesAffected[p.id]!.size ?? 0, requests: t?.requestsAffected[p.id] ?? 0 }
        : p.fault.action === 'clock-skew'
          ? { id: p.id, devices: devices[p.id]!, devicesHit: this.skewedDevices[p.id]!.size, requests: this.skewedRequests[p.id]! }
          : { id: p.id, devices: devices[p.id]!, devicesHit: this.deviceHits[p.id]!, requests: 0 };
      if (t && watchesRecovery(p) && Number.isFinite(p.endMs)) {
        tally.recovered = t.recovered[p.id]!.size;
        tally.recoveryMs = t.recoveryMs[p.id]!;
      }
      return tally;
    });
  }

  private countSkewed(skews: readonly PlannedFault[], index: number): void {
    const t = this.clock.now() - this.startAtMs;
    for (const p of skews) {
      if (t < p.startMs || t >= p.endMs) continue;
      this.skewedRequests[p.id]!++;
      this.skewedDevices[p.id]!.add(index);
    }
  }
}
