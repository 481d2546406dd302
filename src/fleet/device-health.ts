// Which devices are healthy now, from the answers they get: a device whose last controller request
// was answered with success (2xx, 304, or a rejection it expected, such as config 403 before
// attestation) is healthy; one whose last request failed (no answer, or any other status) is
// failing. The progress line shows these beside "onboarded" (ever), which alone would still say
// "onboarded 100/100" while every device is being refused. Local profile server requests do not
// count: they say nothing of the device's standing with its controller.

import { isErrorStatus, type HealthCounts } from './fleet-delta.js';
import type { RequestObserver, RequestOutcome } from '../transport/request-observer.js';

export type { HealthCounts } from './fleet-delta.js';

const HEALTHY = 1;
const FAILING = 2;

export class DeviceHealth implements RequestObserver {
  private readonly state = new Map<number, number>();
  private healthy = 0;
  private failing = 0;

  onOutcome(o: RequestOutcome): void {
    if (o.endpoint.startsWith('lps.')) return;
    const next = o.expected !== undefined || (o.status !== 0 && !isErrorStatus(o.status)) ? HEALTHY : FAILING;
    const prev = this.state.get(o.deviceIndex);
    if (prev === next) return;
    if (prev === HEALTHY) this.healthy--;
    else if (prev === FAILING) this.failing--;
    if (next === HEALTHY) this.healthy++;
    else this.failing++;
    this.state.set(o.deviceIndex, next);
  }

  /** A device that stopped or went down no longer counts either way. */
  forget(deviceIndex: number): void {
    const prev = this.state.get(deviceIndex);
    if (prev === HEALTHY) this.healthy--;
    else if (prev === FAILING) this.failing--;
    this.state.delete(deviceIndex);
  }

  counts(): HealthCounts {
    return { healthy: this.healthy, failing: this.failing };
  }
}
