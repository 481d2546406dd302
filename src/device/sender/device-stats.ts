// What one device sent and what came of it, per endpoint, plus reliable messages it could not
// deliver. Counters live in one small typed array per device (no per-endpoint objects) and are
// expanded into plain objects only when someone asks.

import { smallArraySlab } from '../../memory/small-array-slab.js';
import { ENDPOINT_KEYS, type EndpointKey } from '../../protocol/endpoints.js';
import type { ReliableBacklog, ReliableKind } from '../core/reliable-backlog.js';

export type { ReliableKind };

/** Outcome slots per endpoint, in storage order. */
const SLOTS = ['sent', 'ok', 'clientError', 'serverError', 'transportError', 'rejected'] as const;
type Slot = (typeof SLOTS)[number];
const SLOT_COUNT = SLOTS.length;
const SLOT_INDEX: Record<Slot, number> = Object.fromEntries(SLOTS.map((s, i) => [s, i])) as Record<Slot, number>;
const ENDPOINT_INDEX: Record<EndpointKey, number> = Object.fromEntries(
  ENDPOINT_KEYS.map((k, i) => [k, i]),
) as Record<EndpointKey, number>;

export interface EndpointCounts {
  /** Requests handed to the transport. */
  sent: number;
  /** 2xx and 304 answers. */
  ok: number;
  /** 4xx answers. */
  clientError: number;
  /** 5xx answers (and anything else that is neither success nor 4xx). */
  serverError: number;
  /** No HTTP answer (TransportError). */
  transportError: number;
  /** Answers with a success status whose body failed verification or decoding. */
  rejected: number;
}

export interface DeviceStatsSnapshot {
  endpoints: Partial<Record<EndpointKey, EndpointCounts>>;
  /** Reliable messages given up on (dropped by EVE's rules, discarded to bound memory, or pending at stop). */
  undelivered: Record<ReliableKind, number>;
  /** Log entries inside the undelivered log files/bundles. */
  undeliveredLogEntries: number;
  /** Log files EVE itself would have deleted (its on-disk quota, telemetry/log-quota.ts), not counted undelivered. */
  droppedByQuota: { logs: number; logEntries: number };
  /** Findings reported through onFinding. */
  findings: number;
  /** Callbacks that threw and were caught (a device bug, never a controller's fault). */
  internalErrors: number;
}

export class DeviceStats {
  // 32 bits are plenty for one device's requests to one endpoint in a run, at half the memory.
  // A view into the thread's small-array slab (memory/small-array-slab.ts), not an array of its own.
  private readonly counts = smallArraySlab.uint32(ENDPOINT_KEYS.length * SLOT_COUNT);
  undeliveredInfo = 0;
  undeliveredLogs = 0;
  undeliveredLogEntries = 0;
  undeliveredFlowlog = 0;
  droppedByQuotaLogs = 0;
  droppedByQuotaLogEntries = 0;
  findings = 0;
  internalErrors = 0;

  /** `fleet`: the worker's totals, moved with this device's undelivered counts. */
  constructor(private readonly fleet?: ReliableBacklog) {}

  /** Reliable messages of `kind` given up on; `logEntries`: the log lines inside them (log files). */
  addUndelivered(kind: ReliableKind, messages: number, logEntries = 0): void {
    if (kind === 'info') this.undeliveredInfo += messages;
    else if (kind === 'logs') this.undeliveredLogs += messages;
    else this.undeliveredFlowlog += messages;
    this.undeliveredLogEntries += logEntries;
    if (this.fleet) this.fleet.undelivered[kind] += messages;
  }

  /** A log file EVE's on-disk quota deleted (not undelivered: EVE itself would have lost it). */
  addDroppedByQuota(logEntries: number): void {
    this.droppedByQuotaLogs++;
    this.droppedByQuotaLogEntries += logEntries;
    if (this.fleet) this.fleet.droppedByQuotaLogs++;
  }

  bump(endpoint: EndpointKey, slot: Slot): void {
    this.counts[ENDPOINT_INDEX[endpoint] * SLOT_COUNT + SLOT_INDEX[slot]]! += 1;
  }

  /** Counts an HTTP answer in the slot its status belongs to. */
  answer(endpoint: EndpointKey, status: number): void {
    if ((status >= 200 && status < 300) || status === 304) this.bump(endpoint, 'ok');
    else if (status >= 400 && status < 500) this.bump(endpoint, 'clientError');
    else this.bump(endpoint, 'serverError');
  }

  get(endpoint: EndpointKey, slot: Slot): number {
    return this.counts[ENDPOINT_INDEX[endpoint] * SLOT_COUNT + SLOT_INDEX[slot]]!;
  }

  snapshot(): DeviceStatsSnapshot {
    const endpoints: Partial<Record<EndpointKey, EndpointCounts>> = {};
    for (let e = 0; e < ENDPOINT_KEYS.length; e++) {
      const base = e * SLOT_COUNT;
      if (this.counts[base] === 0) continue;
      const c = {} as EndpointCounts;
      for (let s = 0; s < SLOT_COUNT; s++) c[SLOTS[s]!] = this.counts[base + s]!;
      endpoints[ENDPOINT_KEYS[e]!] = c;
    }
    return {
      endpoints,
      undelivered: { info: this.undeliveredInfo, logs: this.undeliveredLogs, flowlog: this.undeliveredFlowlog },
      undeliveredLogEntries: this.undeliveredLogEntries,
      droppedByQuota: { logs: this.droppedByQuotaLogs, logEntries: this.droppedByQuotaLogEntries },
      findings: this.findings,
      internalErrors: this.internalErrors,
    };
  }
}
