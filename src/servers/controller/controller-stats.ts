// Totals per endpoint and status over the whole controller, for GET /admin/stats. Per-device
// figures live in DeviceCounters; these are the fleet-wide sums.

import { ENDPOINT_KEYS, type EndpointKey } from '../../protocol/endpoints.js';
import { AttestOutcomes } from './attest-outcomes.js';

/** 'unknown' collects requests whose path names no endpoint (answered 404). */
export type StatKey = EndpointKey | 'unknown';
export const STAT_KEYS: readonly StatKey[] = [...ENDPOINT_KEYS, 'unknown'];

export class EndpointTotals {
  requests = 0;
  bytesIn = 0;
  bytesOut = 0;
  /** Bodies that could not be decoded as the expected message (answered 422). */
  undecodable = 0;
  /** Log lines (newlogs lines, LogEntry items) received in accepted requests. */
  logLines = 0;
  readonly byStatus = new Map<number, number>();

  toJSON(): Record<string, unknown> {
    return {
      requests: this.requests,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      undecodable: this.undecodable,
      logLines: this.logLines,
      byStatus: Object.fromEntries([...this.byStatus].sort((a, b) => a[0] - b[0])),
    };
  }
}

export class ControllerStats {
  readonly startedAt = Date.now();
  private readonly totals = new Map<StatKey, EndpointTotals>(STAT_KEYS.map((k) => [k, new EndpointTotals()]));
  /** Info messages received, by ZInfoTypes number. */
  readonly infoByType = new Map<number, number>();
  /** Attestation answers by outcome (GET /admin/stats adds the per-device view). */
  readonly attestation = new AttestOutcomes();

  of(key: StatKey): EndpointTotals {
    return this.totals.get(key)!;
  }

  /** Every request recorded is also added here (ControllerOptions.requestTally), when given. */
  tally: BigInt64Array | undefined;

  record(key: StatKey, status: number, bytesIn: number, bytesOut: number): void {
    if (this.tally) Atomics.add(this.tally, 0, 1n);
    const t = this.of(key);
    t.requests++;
    t.bytesIn += bytesIn;
    t.bytesOut += bytesOut;
    t.byStatus.set(status, (t.byStatus.get(status) ?? 0) + 1);
  }

  toJSON(): Record<string, unknown> {
    const endpoints: Record<string, unknown> = {};
    const byStatus = new Map<number, number>();
    let requests = 0;
    for (const [k, t] of this.totals) {
      if (t.requests === 0) continue;
      endpoints[k] = t.toJSON();
      requests += t.requests;
      for (const [s, n] of t.byStatus) byStatus.set(s, (byStatus.get(s) ?? 0) + n);
    }
    return {
      uptimeMs: Date.now() - this.startedAt,
      requests,
      byStatus: Object.fromEntries([...byStatus].sort((a, b) => a[0] - b[0])),
      endpoints,
      infoByType: Object.fromEntries(this.infoByType),
    };
  }
}
