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

/** The counters as saved by the registry store (registry-store.ts): plain arrays and numbers. */
export interface SavedCounters {
  /** Endpoint key → [requests, failures]. */
  endpoints: [string, number, number][];
  bytesIn: number;
  logLines: number;
  undecodable: number;
  lastSeenAt: number;
  byStatus?: number[];
  infoByType?: number[];
  lastInfo?: [string, number][];
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

  toSaved(): SavedCounters {
    const endpoints: [string, number, number][] = [];
    ENDPOINT_KEYS.forEach((k, i) => {
      if (this.perEndpoint[i]! > 0) endpoints.push([k, this.perEndpoint[i]!, this.perEndpoint[N + i]!]);
    });
    return {
      endpoints,
      bytesIn: this.bytesIn,
      logLines: this.logLines,
      undecodable: this.undecodable,
      lastSeenAt: this.lastSeenAt,
      ...(this.byStatus ? { byStatus: [...this.byStatus] } : {}),
      ...(this.infoByType ? { infoByType: [...this.infoByType] } : {}),
      ...(this.lastInfo ? { lastInfo: [...this.lastInfo] } : {}),
    };
  }

  /** Takes the saved figures (endpoints this version does not know are skipped). */
  restore(s: SavedCounters): void {
    this.perEndpoint.fill(0);
    for (const [k, requests, failures] of s.endpoints) {
      const i = INDEX.get(k as EndpointKey);
      if (i === undefined) continue;
      this.perEndpoint[i] = requests;
      this.perEndpoint[N + i] = failures;
    }
    this.bytesIn = s.bytesIn;
    this.logLines = s.logLines;
    this.undecodable = s.undecodable;
    this.lastSeenAt = s.lastSeenAt;
    this.byStatus = s.byStatus ? [...s.byStatus] : undefined;
    this.infoByType = s.infoByType ? [...s.infoByType] : undefined;
    this.lastInfo = s.lastInfo ? new Map(s.lastInfo) : undefined;
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
