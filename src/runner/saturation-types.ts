// The shape of the saturation verdict (saturation-verdict.ts) as the summary JSON carries it, apart
// so that the summary's type can name it without importing the verdict's logic back.

/** 'machine': the controller's signs (latency climbing, timeouts, unanswered requests) while the
 *  machine's CPUs were nearly all busy, every process counted: the generator and whatever else
 *  ran here (a controller on the same machine) competed for them, so neither can be told apart. */
export type SaturatedParty = 'controller' | 'generator' | 'machine' | 'neither';

/** The figures the verdict was reached on. */
export interface SaturationFigures {
  /** Worst worker event-loop lag p99 over the run, ms. */
  workerLoopLagP99Ms: number;
  /** Highest share of the run a worker thread was busy (0..1), when the workers reported it. */
  workerBusy?: number;
  /** Process CPU, percent of all cores. */
  cpuPercent: number;
  /** The whole machine's CPUs, every process counted, percent (absent when not measured). */
  machineCpuPercent?: number;
  /** All requests: latency p99, ms, and how many there were. */
  latencyP99Ms: number;
  requests: number;
  /** From the run's time series, when it has one: the median interval p99 of the first and of the
   *  last third of the run phase, ms. */
  latencyTrend?: { firstP99Ms: number; lastP99Ms: number };
  /** When the latency did not climb but stood high for a spell (an onboarding storm, a long stall):
   *  the run phase's seconds whose p99 reached `limitMs` (twice the last third's median second, and
   *  50 ms above it), of `runSeconds`, and the longest spell they form, s from the run's start. */
  slowSpell?: { slowSeconds: number; runSeconds: number; limitMs: number; fromS: number; toS: number; spellSeconds: number; worstP99Ms: number };
  /** Requests still waiting for an answer at the end, and requests that timed out. */
  unfinished: number;
  timeouts: number;
}

export interface SaturationVerdict {
  verdict: SaturatedParty;
  /** Why, in words with the figures, most telling first. */
  evidence: string[];
  figures: SaturationFigures;
}
