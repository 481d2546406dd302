// A device whose clock runs ahead or behind (the clock-skew fault): its Clock reads the worker's
// clock plus the offset of the skew faults active for it, so every timestamp it writes (info,
// metrics, logs) and every certificate validity check it makes (GET /certs chains) uses the skewed
// time. Its wake-ups still happen at the right real instants: the scheduler it is given turns its
// skewed due times into real ones and back. And the requests it sends are timed from their real
// due time, so a skewed device's latencies stay true.

import { wake, type Clock, type Millis, type Scheduler, type TimerHandle, type Transport, type TransportRequest, type TransportResponse, type WakeTarget } from '../device/ports.js';
import type { PlannedFault } from './fault-plan.js';

export class DeviceClockSkew {
  readonly clock: Clock;

  /** `faults`: the clock-skew faults that hit this device; `startAtMs`: the run's start on `base`. */
  constructor(
    private readonly base: Clock,
    private readonly faults: readonly PlannedFault[],
    private readonly startAtMs: Millis,
  ) {
    this.clock = { now: () => this.base.now() + this.offsetMs() };
  }

  /** How far the device's clock is off now, ms (0 outside every skew window). */
  offsetMs(): number {
    const t = this.base.now() - this.startAtMs;
    let off = 0;
    for (const p of this.faults) if (t >= p.startMs && t < p.endMs) off += p.fault.offsetMs ?? 0;
    return off;
  }

  /** The device's scheduler: due times in skewed time, wake-ups at the real instants. */
  scheduler(real: Scheduler): Scheduler {
    return {
      at: (at: Millis, target: WakeTarget): TimerHandle => {
        const off = this.offsetMs();
        return real.at(at - off, (dueAt: Millis) => wake(target, dueAt + this.offsetMs()));
      },
      cancel: (handle: TimerHandle) => real.cancel(handle),
    };
  }

  /** The device's transport: due times handed on in real time (latency counts from them). */
  transport(real: Transport): Transport {
    return {
      request: (req: TransportRequest): Promise<TransportResponse> => {
        const off = this.offsetMs();
        return real.request(off === 0 ? req : { ...req, dueAt: req.dueAt - off });
      },
    };
  }
}
