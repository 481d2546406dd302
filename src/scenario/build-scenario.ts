// Turns a schema- and rule-checked document into the normalised Scenario: defaults filled in,
// durations in ms, rates per second, config items as decimal strings, target paths absolute; each
// capability (capabilities.ts) builds its own group fields, sections and timeline actions.
// Only called when no errors were found, so the document's shape can be trusted here.

import { basename, extname, resolve } from 'node:path';
import { checkConfigItem } from './config-items.js';
import { parseDuration } from './parse-duration.js';
import { parseRate } from './parse-rate.js';
import { parseThresholdEntry, type ThresholdEntry } from './parse-threshold.js';
import { SCENARIO_CAPABILITIES } from './capabilities.js';
import { APP_DEFAULTS, DEFAULT_ARRIVAL, DEFAULT_GRACEFUL_STOP_MS, DEFAULT_SEED, GROUP_DEFAULTS } from './scenario-defaults.js';
import type { AppTemplate, ArrivalSpec, GroupSpec, Scenario, TargetSpec, TimelineAction } from './scenario-types.js';

type Scalar = string | number | boolean;

/** The file's shape (what the schema allows), for typed access. */
export interface ScenarioDocument {
  name?: string;
  description?: string;
  seed?: number;
  duration: string;
  gracefulStop?: string;
  target?:
    | 'embedded'
    | { url: string; v1Url?: string; rootCa?: string; onboardCert: string; onboardKey: string; insecureSkipVerify?: boolean };
  groups: GroupDocument[];
  arrival?: { model: ArrivalSpec['model']; rate?: string | number; over?: string };
  timeline?: (Record<string, unknown> & { at: string; action: TimelineAction['action'] })[];
  thresholds?: ThresholdEntry[];
  /** Sections of the capabilities (capabilities.ts), e.g. sites, attestation. */
  [capabilitySection: string]: unknown;
}

interface GroupDocument {
  name: string;
  count: number;
  eveVersion?: string;
  preRegistered?: boolean;
  logs?: { format?: 'newlogs' | 'legacy'; linesPerSec?: number; quotaMB?: number };
  flowlog?: { interval?: string };
  apps?: (Partial<AppTemplate> & { name: string })[];
  configItems?: Record<string, Scalar>;
  globalProfile?: string;
  hardware?: Partial<GroupSpec['hardware']>;
  appStep?: string;
  /** Fields of the capabilities (capabilities.ts), e.g. api, tpm, gnss. */
  [capabilityField: string]: unknown;
}

export interface BuiltScenario {
  scenario: Scenario;
  /** `arrival.over` in ms when the file gave a window instead of a rate: the rate then follows the
   *  final device count (after --devices). */
  arrivalOverMs?: number;
}

export function buildScenario(doc: ScenarioDocument, file: string, baseDir: string): BuiltScenario {
  const groups = doc.groups.map(buildGroup);
  const { arrival, overMs } = buildArrival(doc.arrival);
  const scenario: Scenario = {
    file,
    name: doc.name ?? basename(file, extname(file)),
    ...(doc.description !== undefined ? { description: doc.description } : {}),
    seed: doc.seed ?? DEFAULT_SEED,
    durationMs: parseDuration(doc.duration),
    gracefulStopMs: doc.gracefulStop !== undefined ? parseDuration(doc.gracefulStop) : DEFAULT_GRACEFUL_STOP_MS,
    target: buildTarget(doc.target, baseDir),
    groups,
    arrival,
    timeline: (doc.timeline ?? []).map(buildAction),
    thresholds: (doc.thresholds ?? []).map(parseThresholdEntry),
  };
  for (const c of SCENARIO_CAPABILITIES) c.buildScenario?.(doc, scenario);
  return overMs === undefined ? { scenario } : { scenario, arrivalOverMs: overMs };
}

function buildGroup(g: GroupDocument): GroupSpec {
  const d = GROUP_DEFAULTS;
  const configItems: Record<string, string> = {};
  for (const [k, v] of Object.entries(g.configItems ?? {})) {
    const r = checkConfigItem(k, v);
    configItems[k] = r.ok ? r.value : String(v);
  }
  // Capability fields where the schema has them: some right after count, the rest at the end
  // (the API v1 capability always sets `api`).
  const capabilityFields = (after: 'count' | 'core'): Partial<GroupSpec> =>
    Object.assign({}, ...SCENARIO_CAPABILITIES.filter((c) => (c.groupFieldsAfter ?? 'core') === after).map((c) => c.buildGroup?.(g) ?? {}));
  return {
    name: g.name,
    count: g.count,
    ...(capabilityFields('count') as Pick<GroupSpec, 'api'>),
    eveVersion: g.eveVersion ?? d.eveVersion,
    preRegistered: g.preRegistered ?? d.preRegistered,
    logFormat: g.logs?.format ?? d.logFormat,
    logLinesPerSec: g.logs?.linesPerSec ?? d.logLinesPerSec,
    // The group's own newlog.gzipfiles.ondisk.maxmegabytes config item, when it serves one, is the quota its devices keep.
    logQuotaMB: g.logs?.quotaMB ?? configuredQuotaMB(configItems) ?? d.logQuotaMB,
    flowlogIntervalMs: g.flowlog?.interval !== undefined ? parseDuration(g.flowlog.interval) : d.flowlogIntervalMs,
    apps: (g.apps ?? []).map((a) => ({
      name: a.name,
      activate: a.activate ?? APP_DEFAULTS.activate,
      profiles: a.profiles ?? [...APP_DEFAULTS.profiles],
      logLinesPerSec: a.logLinesPerSec ?? APP_DEFAULTS.logLinesPerSec,
      flowsPerMessage: a.flowsPerMessage ?? APP_DEFAULTS.flowsPerMessage,
    })),
    configItems,
    globalProfile: g.globalProfile ?? d.globalProfile,
    hardware: { ...d.hardware, ...g.hardware },
    appStepMs: g.appStep !== undefined ? parseDuration(g.appStep) : d.appStepMs,
    ...capabilityFields('core'),
  };
}

/** newlog.gzipfiles.ondisk.maxmegabytes among a group's config items, when it is a value EVE accepts. */
function configuredQuotaMB(items: Record<string, string>): number | undefined {
  const v = items['newlog.gzipfiles.ondisk.maxmegabytes'];
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  const mb = Number(v);
  return mb >= 10 && mb <= 4294967295 ? mb : undefined;
}

function buildArrival(a: ScenarioDocument['arrival']): { arrival: ArrivalSpec; overMs?: number } {
  if (!a) return { arrival: { ...DEFAULT_ARRIVAL } };
  if (a.model === 'all-at-once') return { arrival: { model: a.model, ratePerSec: 0 } };
  if (a.over !== undefined) {
    // Placeholder rate; load-scenario sets it from the final device count.
    return { arrival: { model: a.model, ratePerSec: 0 }, overMs: parseDuration(a.over) };
  }
  return { arrival: { model: a.model, ratePerSec: parseRate(a.rate!) } };
}

function buildTarget(t: ScenarioDocument['target'], baseDir: string): TargetSpec {
  if (t === undefined || t === 'embedded') return { kind: 'embedded' };
  return {
    kind: 'external',
    url: t.url,
    ...(t.rootCa !== undefined ? { rootCaFile: resolve(baseDir, t.rootCa) } : {}),
    onboardCertFile: resolve(baseDir, t.onboardCert),
    onboardKeyFile: resolve(baseDir, t.onboardKey),
    ...(t.v1Url !== undefined ? { v1Url: t.v1Url } : {}),
    insecureSkipVerify: t.insecureSkipVerify ?? false,
  };
}

function buildAction(t: Record<string, unknown> & { at: string; action: TimelineAction['action'] }): TimelineAction {
  const atMs = parseDuration(t.at);
  const group = typeof t.group === 'string' ? { group: t.group } : {};
  switch (t.action) {
    case 'maintenance':
      return { atMs, action: 'maintenance', enabled: t.enabled as boolean };
    case 'config-item': {
      const key = t.key as string;
      const r = checkConfigItem(key, t.value as Scalar);
      return { atMs, action: 'config-item', ...group, key, value: r.ok ? r.value : String(t.value) };
    }
    case 'app-activate':
      return { atMs, action: 'app-activate', ...group, app: t.app as string, activate: t.activate as boolean };
    case 'reboot':
      return { atMs, action: 'reboot', ...group };
    case 'controller-epoch':
      return { atMs, action: 'controller-epoch', ...group };
    case 'power-on':
      return { atMs, action: 'power-on', ...group };
    default:
      for (const c of SCENARIO_CAPABILITIES) {
        const built = c.buildTimelineAction?.(atMs, t);
        if (built) return built;
      }
      throw new Error(`timeline action "${String(t.action)}" has no builder`);
  }
}
