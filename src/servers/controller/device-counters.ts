// What the controller counts per device. Kept compact for 10^5 devices: one typed array for the
// per-endpoint figures, flat [key, count, key, count, ...] arrays for the few statuses and info
// types a device sees, and a map only for the last-seen info keys. No bodies are stored.

import { ENDPOINT_KEYS, type EndpointKey } from '../../protocol/endpoints.js';

const N = ENDPOINT_KEYS.length;
const INDEX = new Map<EndpointKey, number>(ENDPOINT_KEYS.map((k, i) => [k, i]));

/** Adds 1 to `key` in a flat pair list; a device sees only a handful of distinct keys. */
function bump(pairs: number[], key: number): void {
  for (let i = 0; i < pairs.length; i += 2) {
    if (pairs[i] === key) {
      pairs[i + 1]!++;
      return;
    }
  }
  pairs.push(key, 1);
}

function pairsToObject(pairs: number[] | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (!pairs) return out;
  const idx: number[] = [];
  for (let i = 0; i < pairs.length; i += 2) idx.push(i);
  idx.sort((x, y) => pairs[x]! - pairs[y]!);
  for (const i of idx) out[String(pairs[i])] = pairs[i + 1]!;
  return out;
}

export class DeviceCounters {
  /** [0, N): requests per endpoint; [N, 2N): those answered with anything but 2xx/304. */
  private readonly perEndpoint = new Uint32Array(2 * N);
  bytesIn = 0;
  logLines = 0;
  undecodable = 0;
  /** Last request time, epoch ms. */
  lastSeenAt = 0;
  /** HTTP status / count pairs. */
  private byStatus: number[] | undefined;
  /** ZInfoTypes number / count pairs. */
  private infoByType: number[] | undefined;
  /** Last info per object key (`ztype:object-id`) → receive time, epoch ms. */
  private lastInfo: Map<string, number> | undefined;

  record(endpoint: EndpointKey, status: number, bytesIn: number, now: number): void {
    const i = INDEX.get(endpoint)!;
    this.perEndpoint[i]!++;
    if (!(status >= 200 && status < 300) && status !== 304) this.perEndpoint[N + i]!++;
    this.bytesIn += bytesIn;
    this.lastSeenAt = now;
    bump((this.byStatus ??= []), status);
  }

  recordInfo(ztype: number, objectKey: string, now: number): void {
    bump((this.infoByType ??= []), ztype);
    (this.lastInfo ??= new Map()).set(`${ztype}:${objectKey}`, now);
  }

  totalRequests(): number {
    let n = 0;
    for (let i = 0; i < N; i++) n += this.perEndpoint[i]!;
    return n;
  }

  requestsTo(endpoint: EndpointKey): number {
    return this.perEndpoint[INDEX.get(endpoint)!]!;
  }

  toJSON(): Record<string, unknown> {
    const endpoints: Record<string, { requests: number; failures: number }> = {};
    ENDPOINT_KEYS.forEach((k, i) => {
      if (this.perEndpoint[i]! > 0) endpoints[k] = { requests: this.perEndpoint[i]!, failures: this.perEndpoint[N + i]! };
    });
    return {
      endpoints,
      byStatus: pairsToObject(this.byStatus),
      bytesIn: this.bytesIn,
      logLines: this.logLines,
      undecodable: this.undecodable,
      lastSeenAt: this.lastSeenAt ? new Date(this.lastSeenAt).toISOString() : undefined,
      infoByType: pairsToObject(this.infoByType),
      lastInfo: Object.fromEntries([...(this.lastInfo ?? [])].map(([k, t]) => [k, new Date(t).toISOString()])),
    };
  }
}
