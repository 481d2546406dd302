// Devices healthy or failing by their last controller answer (fleet/device-health.ts): what the
// progress line shows beside "onboarded", which counts devices that ever onboarded.

import { describe, expect, it } from 'vitest';
import { DeviceHealth } from '../src/fleet/device-health.js';
import type { RequestOutcome } from '../src/transport/request-observer.js';

const outcome = (deviceIndex: number, status: number, over: Partial<RequestOutcome> = {}): RequestOutcome => ({
  endpoint: 'config',
  deviceIndex,
  method: 'POST',
  path: '/api/v2/edgedevice/config',
  status,
  dueAt: 0,
  sentAt: 0,
  doneAt: 1,
  requestHeaders: {},
  ...over,
});

describe('device health', () => {
  it('follows each device\'s last controller answer', () => {
    const h = new DeviceHealth();
    h.onOutcome(outcome(1, 200));
    h.onOutcome(outcome(2, 304));
    h.onOutcome(outcome(3, 403, { expected: 'before-attestation' }));
    expect(h.counts()).toEqual({ healthy: 3, failing: 0 });
    // The controller forgets the fleet: every device is refused.
    for (const i of [1, 2, 3]) h.onOutcome(outcome(i, 400));
    expect(h.counts()).toEqual({ healthy: 0, failing: 3 });
    h.onOutcome(outcome(2, 0, { error: 'ECONNREFUSED' }));
    expect(h.counts()).toEqual({ healthy: 0, failing: 3 });
    h.onOutcome(outcome(2, 201, { endpoint: 'info' }));
    expect(h.counts()).toEqual({ healthy: 1, failing: 2 });
  });

  it('ignores local profile server answers and forgets devices that went down', () => {
    const h = new DeviceHealth();
    h.onOutcome(outcome(1, 200));
    h.onOutcome(outcome(1, 404, { endpoint: 'lps.radio' }));
    expect(h.counts()).toEqual({ healthy: 1, failing: 0 });
    h.onOutcome(outcome(2, 500));
    h.forget(2);
    h.forget(7);
    expect(h.counts()).toEqual({ healthy: 1, failing: 0 });
  });
});
