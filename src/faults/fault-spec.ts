// Faults on demand (issue 12 §2): what a fault is, and the one parser for it that both the scenario
// timeline (`- { at: 1m, action: partition, group: edge, share: 30%, for: 60s }`) and the command
// line (`--fault 'partition group=edge share=30% at=1m for=60s'`) go through, so both word their
// errors the same way. Pure: no I/O, no clock.

import { formatDuration, parseDuration } from '../scenario/parse-duration.js';

/** Network faults act in the generator's transport; the rest act on the device itself. */
export const NETWORK_FAULT_KINDS = ['partition', 'blackhole', 'latency', 'loss', 'reset', 'dns-failure', 'tls-failure'] as const;
export const DEVICE_FAULT_KINDS = ['clock-skew', 'power-loss', 'tpm-reset'] as const;
export const FAULT_KINDS = [...NETWORK_FAULT_KINDS, ...DEVICE_FAULT_KINDS] as const;

export type NetworkFaultKind = (typeof NETWORK_FAULT_KINDS)[number];
export type FaultKind = (typeof FAULT_KINDS)[number];

/** A fault as a timeline action (scenario-types.ts TimelineAction). Times are ms from the run's start. */
export interface FaultAction {
  atMs: number;
  action: FaultKind;
  /** Only this group's devices (absent: the whole fleet). */
  group?: string;
  /** Share (0..1] of the group's (or fleet's) devices, chosen by the scenario seed (absent: all). */
  share?: number;
  /** Exactly these fleet indices (excludes group and share). */
  devices?: number[];
  /** How long it lasts; absent: to the end of the run (tpm-reset: always absent, it is an instant). */
  forMs?: number;
  /** latency: added delay and its jitter (uniform within ±jitter). */
  delayMs?: number;
  jitterMs?: number;
  /** loss: share (0..1] of the requests that time out. */
  lossShare?: number;
  /** clock-skew: how far the device's clock runs ahead (> 0) or behind (< 0), ms. */
  offsetMs?: number;
}

/** The fields a fault takes, and which kinds take the kind-specific ones. */
export const COMMON_FAULT_FIELDS = ['at', 'for', 'until', 'group', 'share', 'devices'] as const;
export const KIND_FIELDS: Readonly<Record<FaultKind, readonly string[]>> = {
  partition: [],
  blackhole: [],
  latency: ['delay', 'jitter'],
  loss: ['loss'],
  reset: [],
  'dns-failure': [],
  'tls-failure': [],
  'clock-skew': ['offset'],
  'power-loss': [],
  'tpm-reset': [],
};

/** How long power stays off after a power-loss without `for` (the timeline reboot's downtime). */
export const DEFAULT_POWER_LOSS_MS = 30_000;

export interface FaultProblem {
  /** The field at fault ('action' for the kind itself). */
  field: string;
  message: string;
}

export type FaultParse = { ok: true; fault: FaultAction } | { ok: false; problems: FaultProblem[] };

export function isFaultKind(v: unknown): v is FaultKind {
  return typeof v === 'string' && (FAULT_KINDS as readonly string[]).includes(v);
}

export function isNetworkFault(f: { action: string }): f is FaultAction & { action: NetworkFaultKind } {
  return (NETWORK_FAULT_KINDS as readonly string[]).includes(f.action);
}

export function isFaultAction(a: { action: string }): a is FaultAction {
  return isFaultKind(a.action);
}

/**
 * Checks and normalises one fault from its fields as written (YAML values or command-line strings).
 * Every problem is named by its field, so the caller can point at the file position or the flag.
 */
export function parseFault(kind: unknown, fields: Readonly<Record<string, unknown>>): FaultParse {
  const problems: FaultProblem[] = [];
  if (!isFaultKind(kind)) {
    return { ok: false, problems: [{ field: 'action', message: `unknown fault "${String(kind)}"; faults are ${FAULT_KINDS.join(', ')}` }] };
  }
  const allowed = new Set<string>(['action', ...COMMON_FAULT_FIELDS, ...KIND_FIELDS[kind]]);
  for (const key of Object.keys(fields)) {
    if (allowed.has(key)) continue;
    const elsewhere = FAULT_KINDS.filter((k) => KIND_FIELDS[k].includes(key));
    problems.push({
      field: key,
      message: elsewhere.length > 0 ? `does not apply to ${kind} (only to ${elsewhere.join(', ')})` : `is not a fault field; fields are ${[...allowed].filter((f) => f !== 'action').join(', ')}`,
    });
  }
  const fault: FaultAction = { atMs: 0, action: kind };
  const at = duration(fields.at, 'at', problems);
  if (fields.at === undefined) problems.push({ field: 'at', message: 'is missing: when the fault starts, e.g. at=1m' });
  else if (at !== undefined) fault.atMs = at;

  if (fields.for !== undefined && fields.until !== undefined) problems.push({ field: 'until', message: 'give either for or until, not both' });
  if (kind === 'tpm-reset') {
    for (const f of ['for', 'until']) if (fields[f] !== undefined) problems.push({ field: f, message: 'does not apply to tpm-reset (it happens at one instant)' });
  } else {
    const forMs = duration(fields.for, 'for', problems);
    if (forMs !== undefined) {
      if (forMs <= 0) problems.push({ field: 'for', message: 'must be longer than 0s' });
      else fault.forMs = forMs;
    }
    const until = duration(fields.until, 'until', problems);
    if (until !== undefined && at !== undefined) {
      if (until <= at) problems.push({ field: 'until', message: `must be after at (${formatDuration(at)})` });
      else fault.forMs = until - at;
    }
  }

  if (fields.group !== undefined) {
    if (typeof fields.group !== 'string' || fields.group === '') problems.push({ field: 'group', message: 'must be the name of a group' });
    else fault.group = fields.group;
  }
  if (fields.share !== undefined) {
    const s = share(fields.share);
    if (typeof s === 'string') problems.push({ field: 'share', message: s });
    else fault.share = s;
  }
  if (fields.devices !== undefined) {
    const d = deviceList(fields.devices);
    if (typeof d === 'string') problems.push({ field: 'devices', message: d });
    else fault.devices = d;
    if (fields.group !== undefined || fields.share !== undefined) {
      problems.push({ field: 'devices', message: 'names the devices itself: give devices, or group and/or share, not both' });
    }
  }

  switch (kind) {
    case 'latency': {
      if (fields.delay === undefined) problems.push({ field: 'delay', message: 'is missing: the added delay, e.g. delay=300ms' });
      const delay = duration(fields.delay, 'delay', problems);
      if (delay !== undefined) fault.delayMs = delay;
      const jitter = duration(fields.jitter, 'jitter', problems);
      if (jitter !== undefined) fault.jitterMs = jitter;
      break;
    }
    case 'loss': {
      if (fields.loss === undefined) problems.push({ field: 'loss', message: 'is missing: the share of requests lost, e.g. loss=20%' });
      else {
        const s = share(fields.loss);
        if (typeof s === 'string') problems.push({ field: 'loss', message: s });
        else fault.lossShare = s;
      }
      break;
    }
    case 'clock-skew': {
      if (fields.offset === undefined) problems.push({ field: 'offset', message: 'is missing: how far the clock is off, e.g. offset=+2h or offset=-10m' });
      else {
        const o = signedDuration(fields.offset);
        if (typeof o === 'string') problems.push({ field: 'offset', message: o });
        else fault.offsetMs = o;
      }
      break;
    }
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, fault };
}

/** When the fault ends, ms from the run's start (Infinity: it lasts to the end; power-loss: power returns). */
export function faultEndMs(f: FaultAction): number {
  if (f.action === 'tpm-reset') return f.atMs;
  if (f.action === 'power-loss') return f.atMs + (f.forMs ?? DEFAULT_POWER_LOSS_MS);
  return f.forMs === undefined ? Infinity : f.atMs + f.forMs;
}

/** Who the fault hits, as the report shows it: "30% of group edge", "devices 3,7", "all devices". */
export function describeFaultTarget(f: FaultAction): string {
  if (f.devices) return `device${f.devices.length === 1 ? '' : 's'} ${f.devices.join(',')}`;
  const where = f.group !== undefined ? `group ${f.group}` : 'all devices';
  return f.share !== undefined && f.share < 1 ? `${percent(f.share)} of ${f.group !== undefined ? `group ${f.group}` : 'the fleet'}` : where;
}

/** The fault's parameters, for the report: "delay 300ms ±100ms", "loss 20%", "offset +2h". */
export function describeFaultParams(f: FaultAction): string {
  switch (f.action) {
    case 'latency':
      return `delay ${formatDuration(f.delayMs ?? 0)}${f.jitterMs ? ` ±${formatDuration(f.jitterMs)}` : ''}`;
    case 'loss':
      return `loss ${percent(f.lossShare ?? 0)}`;
    case 'clock-skew':
      return `offset ${(f.offsetMs ?? 0) < 0 ? '-' : '+'}${formatDuration(Math.abs(f.offsetMs ?? 0))}`;
    default:
      return '';
  }
}

/** One line naming the fault: "partition 30% of group edge" (+ params). */
export function faultLabel(f: FaultAction): string {
  const params = describeFaultParams(f);
  return `${f.action} ${describeFaultTarget(f)}${params ? `, ${params}` : ''}`;
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}

function duration(v: unknown, field: string, problems: FaultProblem[]): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') {
    problems.push({ field, message: `must be a duration such as 500ms, 90s or 2m, got ${JSON.stringify(v)}` });
    return undefined;
  }
  try {
    return parseDuration(v);
  } catch (e) {
    problems.push({ field, message: (e as Error).message });
    return undefined;
  }
}

/** A share in (0, 1]: a fraction or a percentage such as 30%; or the words of what is wrong. */
export function share(v: unknown): number | string {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(v);
    if (!m) return `"${v}" is not a share; expected a percentage such as 30% or a fraction such as 0.3`;
    n = Number(m[1]) / (m[2] === '%' ? 100 : 1);
  } else return `must be a share such as 30% or 0.3, got ${JSON.stringify(v)}`;
  if (!(n > 0 && n <= 1)) return `must be more than 0 and at most 100%, got ${String(v)}`;
  return n;
}

function deviceList(v: unknown): number[] | string {
  const items = typeof v === 'string' ? v.split(',').map((s) => s.trim()) : Array.isArray(v) ? v : undefined;
  if (!items || items.length === 0) return 'must be a non-empty list of device indices, e.g. devices=0,5,17';
  const out: number[] = [];
  for (const item of items) {
    const n = typeof item === 'number' ? item : typeof item === 'string' && /^\d+$/.test(item) ? Number(item) : NaN;
    if (!Number.isSafeInteger(n) || n < 0) return `"${String(item)}" is not a device index (an integer ≥ 0, as findings name devices)`;
    out.push(n);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

function signedDuration(v: unknown): number | string {
  if (typeof v !== 'string') return `must be a signed duration such as +2h or -10m, got ${JSON.stringify(v)}`;
  const m = /^\s*([+-]?)(.*)$/.exec(v)!;
  try {
    const ms = parseDuration(m[2]!);
    if (ms === 0) return 'must not be 0 (a clock that is not skewed)';
    return m[1] === '-' ? -ms : ms;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * `--fault 'partition group=edge share=30% at=1m for=60s'`: the kind first, then key=value pairs.
 * Returns the fault or the problems, each naming its key.
 */
export function parseFaultFlag(text: string): FaultParse {
  const words = text.trim().split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) return { ok: false, problems: [{ field: 'action', message: `is empty; expected e.g. 'partition group=edge share=30% at=1m for=60s'` }] };
  const [kind, ...pairs] = words;
  const fields: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) return { ok: false, problems: [{ field: p, message: 'is not key=value (e.g. at=1m)' }] };
    const key = p.slice(0, eq);
    if (key in fields) return { ok: false, problems: [{ field: key, message: 'is given twice' }] };
    fields[key] = p.slice(eq + 1);
  }
  return parseFault(kind, fields);
}
