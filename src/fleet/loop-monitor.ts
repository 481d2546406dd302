// Watches the generator itself: event-loop delay (perf_hooks.monitorEventLoopDelay) and how busy
// the thread was (event-loop utilisation). In a worker thread process.cpuUsage() reports the whole
// process, so utilisation is the per-thread CPU figure: near 1 means this worker, not the target,
// limits the run.

import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';
import type { LoopStats } from './fleet-delta.js';

export class LoopMonitor {
  /** Reset every sample (interval figures) ... */
  private readonly delay: IntervalHistogram;
  /** ... and never reset (run figures): ELD histograms cannot be added into another. */
  private readonly runDelay: IntervalHistogram;
  private lastElu: EventLoopUtilization;
  private worstP99Ms = 0;
  private worstMaxMs = 0;
  private sumUtil = 0;
  private samples = 0;

  constructor(private readonly resolutionMs = 10) {
    this.delay = monitorEventLoopDelay({ resolution: resolutionMs });
    this.delay.enable();
    this.runDelay = monitorEventLoopDelay({ resolution: resolutionMs });
    this.runDelay.enable();
    this.lastElu = performance.eventLoopUtilization();
  }

  /** Stats since the previous sample; starts a new interval. */
  sample(): LoopStats {
    const d = this.delay;
    // Values are ns between two ticks of a `resolutionMs` timer: the resolution itself is not lag.
    const lag = this.lagMs;
    const stats: LoopStats = {
      p50Ms: d.count > 0 ? lag(d.percentile(50)) : 0,
      p99Ms: d.count > 0 ? lag(d.percentile(99)) : 0,
      maxMs: d.count > 0 ? lag(d.max) : 0,
      utilisation: 0,
    };
    d.reset();
    const elu = performance.eventLoopUtilization();
    stats.utilisation = performance.eventLoopUtilization(elu, this.lastElu).utilization;
    this.lastElu = elu;
    this.worstP99Ms = Math.max(this.worstP99Ms, stats.p99Ms);
    this.worstMaxMs = Math.max(this.worstMaxMs, stats.maxMs);
    this.sumUtil += stats.utilisation;
    this.samples++;
    return stats;
  }

  /** Lag p99 and max over the whole run, worst interval p99, and mean utilisation over all samples. */
  summary(): RunLoopStats {
    const r = this.runDelay;
    return {
      p99Ms: r.count > 0 ? this.lagMs(r.percentile(99)) : 0,
      maxMs: r.count > 0 ? this.lagMs(r.max) : 0,
      worstIntervalP99Ms: this.worstP99Ms,
      worstIntervalMaxMs: this.worstMaxMs,
      meanUtilisation: this.samples ? this.sumUtil / this.samples : 0,
    };
  }

  stop(): void {
    this.delay.disable();
    this.runDelay.disable();
  }

  private readonly lagMs = (ns: number): number => Math.max(0, ns / 1e6 - this.resolutionMs);
}

export interface RunLoopStats {
  p99Ms: number;
  maxMs: number;
  worstIntervalP99Ms: number;
  worstIntervalMaxMs: number;
  meanUtilisation: number;
}
