// What each run phase hands the ones after it (runScenario passes them along). Here rather than
// in the phase files so that a phase names what it is given without importing the phases before it.

import type { MessagePort } from 'node:worker_threads';
import type { LoopMonitor } from '../../fleet/loop-monitor.js';
import type { ShardResult, TargetInfo } from '../../fleet/worker-protocol.js';
import type { ControllerAdminApi } from '../controller-admin-api.js';
import type { MetricsServer } from '../metrics-server.js';
import type { ProgressView } from '../progress-view.js';
import type { RunningCapability } from '../run-capability.js';
import type { RunPhaseEnd } from './run-phase-end.js';
import type { SeriesRun } from '../series/series-run.js';
import type { WorkerFigures } from './worker-results.js';
import type { RssPeak } from '../rss-peak.js';
import type { MachineCpuSample } from '../machine-cpu.js';

/** start-servers: the target and what serves the run. */
export interface Servers {
  target: TargetInfo;
  /** The embedded controller's admin API; absent with a real controller. */
  admin?: ControllerAdminApi;
  /** The admin API is a real controller's (--controller-admin), shared by every shard of the fleet. */
  adminShared?: true;
  /** The embedded controller's requests answered and busy ms so far (its thread's), for the series. */
  controllerLoad?: () => { requests: number; activeMs: number };
  /** The capabilities this run uses, in registry order. */
  capabilities: RunningCapability[];
  metrics?: MetricsServer;
  progress?: ProgressView;
}

/** start-workers: the workers, loaded and waiting for 'go'. */
export interface Workers {
  /** One per worker, settling when the worker has stopped its devices and reported. */
  tasks: Promise<ShardResult>[];
  /** The main thread's end of each worker's message channel. */
  ports: MessagePort[];
}

/** run-timeline: the run under way. */
export interface Started {
  /** The common start instant, epoch ms. */
  startAtMs: number;
  /** Process CPU use at the start, for the generator's CPU share. */
  cpuStart: NodeJS.CpuUsage;
  /** The whole machine's CPU times at the start (machine-cpu.ts): what else used the cores. */
  machineCpuStart: MachineCpuSample;
  /** The main thread's event-loop lag over the run. */
  mainLoop: LoopMonitor;
  /** When the run phase ends: the planned end, or earlier (RunScenarioOptions.endRunPhase). */
  runPhase: RunPhaseEnd;
  /** Drops the run's Ctrl-C handler (stop the devices), once there is nothing left to stop. */
  stopInterruptHandler: () => void;
  /** The run's time series (series/series-run.ts). */
  series: SeriesRun;
  /** The generator process's peak RSS, sampled from the start instant (rss-peak.ts). */
  rss: RssPeak;
}

/** drain: the workers' figures, once they have stopped. */
export interface Drained extends WorkerFigures {
  /** End of the measured window, epoch ms: the planned end, or earlier when ended early (endRunPhase) or stopped (Ctrl-C). */
  endMs: number;
  /** Process CPU use since the start. */
  cpu: NodeJS.CpuUsage;
  /** The whole machine's CPUs, every process counted, busy this share since the start (percent), when the kernel reports them. */
  machineCpuPercent: number | undefined;
}
