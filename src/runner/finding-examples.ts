// The first few findings of each kind, with what a user needs to look one up: the device (fleet
// index and serial), the endpoint, the request id and HTTP status when the finding is about one
// answer, and the detail text (e.g. the certificate that did not chain to the given root). The
// workers keep the first ones per kind (metric-recorder.ts); the aggregate keeps the first of
// those per kind over all workers; the summary carries them as `findings.examples`.

import type { DeviceFinding } from '../device/device-options.js';

/** Examples kept per finding kind over the run. */
export const EXAMPLES_PER_KIND = 5;

/** One finding as the summary JSON shows it. */
export interface FindingExample {
  /** Fleet index of the device. */
  device: number;
  serial?: string;
  endpoint: string;
  requestId?: string;
  status?: number;
  detail: string;
}

export function toFindingExample(f: DeviceFinding): FindingExample {
  return {
    device: f.deviceIndex,
    ...(f.serial !== undefined ? { serial: f.serial } : {}),
    endpoint: f.endpoint,
    ...(f.requestId !== undefined ? { requestId: f.requestId } : {}),
    ...(f.status !== undefined ? { status: f.status } : {}),
    detail: f.detail,
  };
}

/** Keeps the first `perKind` findings of each kind, in arrival order (simulator errors are not findings). */
export class FindingExamples {
  private readonly byKind = new Map<string, DeviceFinding[]>();

  constructor(private readonly perKind = EXAMPLES_PER_KIND) {}

  add(f: DeviceFinding): void {
    if (f.simulatorError) return;
    let list = this.byKind.get(f.kind);
    if (!list) this.byKind.set(f.kind, (list = []));
    if (list.length < this.perKind) list.push(f);
  }

  /** Kind → examples, kinds in alphabetical order. */
  toJson(): Record<string, FindingExample[]> {
    const out: Record<string, FindingExample[]> = {};
    for (const kind of [...this.byKind.keys()].sort()) out[kind] = this.byKind.get(kind)!.map(toFindingExample);
    return out;
  }
}

/** The examples of several summaries (the shards of a fleet) together: the first ones per kind, in shard order. */
export function mergeFindingExamples(parts: readonly (Record<string, FindingExample[]> | undefined)[]): Record<string, FindingExample[]> {
  const byKind = new Map<string, FindingExample[]>();
  for (const part of parts) {
    for (const [kind, list] of Object.entries(part ?? {})) {
      const into = byKind.get(kind) ?? [];
      byKind.set(kind, [...into, ...list].slice(0, EXAMPLES_PER_KIND));
    }
  }
  return Object.fromEntries([...byKind.keys()].sort().map((k) => [k, byKind.get(k)!]));
}
