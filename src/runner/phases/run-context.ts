// What the run phases (src/runner/phases/) hand each other: the checked inputs of prepare-fleet,
// the cleanups every phase adds to (run in reverse order by runScenario's finally), and the fleet
// aggregate the workers' deltas are merged into.

import type { FleetPlan } from '../../fleet/fleet-plan.js';
import type { TargetInfo } from '../../fleet/worker-protocol.js';
import type { FleetIdentityStore } from '../../identity/fleet-identity-store.js';
import type { Scenario } from '../../scenario/scenario-types.js';
import type { FleetAggregate } from '../aggregate.js';
import type { RunScenarioOptions } from '../run-options.js';
import type { Cleanups } from './cleanups.js';

export type Print = (text: string) => void;

export interface RunContext {
  readonly opts: RunScenarioOptions;
  /** The report goes here. */
  readonly out: Print;
  /** Messages (warnings, progress notes) go here. */
  readonly err: Print;
  readonly scenario: Scenario;
  /** Devices this process runs: its shard's (the whole fleet without --shard). */
  readonly totalDevices: number;
  /** Which part of the fleet this process runs, and how it splits it over its workers. */
  readonly plan: FleetPlan;
  /** Enters the serials (identity/fleet-id.ts). */
  readonly fleetId: string;
  /** The common start instant given by --start-at, epoch ms. */
  readonly startAtMs?: number;
  /** Wall clock, epoch ms. */
  readonly now: () => number;
  /** Worker threads asked for (the shards may be fewer). */
  readonly workers: number;
  readonly workerFile: string;
  /** The workers' old-generation growth between mark-compacts, percent (fleet/worker-heap-flags.ts; 0: V8 chooses). */
  readonly heapGrowingPercent: number;
  readonly stateDir: string;
  /** The real controller with its files read and checked; absent with the embedded controller. */
  readonly external?: TargetInfo;
  readonly store: FleetIdentityStore;
  readonly cleanups: Cleanups;
  readonly aggregate: FleetAggregate;
}

/** An error's message, for a line of output. */
export function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** One decimal, as the summary shows milliseconds and percentages. */
export function round1(v: number): number {
  return Math.round(v * 10) / 10;
}
