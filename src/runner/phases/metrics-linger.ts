// Phase 7 (with --metrics-port): /metrics stays up after the summary for --metrics-linger, so that
// Prometheus scrapes the final figures (the drain's last deltas arrive after its last scrape of the
// run; 35 s by default covers two scrapes at the usual 15 s). Ctrl-C or SIGTERM ends the wait early; the exit
// code is the run's either way.

import type { Servers, Started } from './phase-results.js';
import type { RunContext } from './run-context.js';
import { STOP_SIGNALS } from './stop-signals.js';

/** --metrics-linger's default: two scrapes at 15 s, and a margin. */
export const DEFAULT_METRICS_LINGER_MS = 35_000;

export async function lingerMetrics(ctx: RunContext, servers: Servers, started: Started): Promise<void> {
  const { opts, err } = ctx;
  const lingerMs = opts.metricsLingerMs ?? 0;
  if (!servers.metrics || lingerMs <= 0) return;
  // The run's own Ctrl-C handler (stop the devices) has nothing left to stop: Ctrl-C now means
  // "stop waiting".
  started.stopInterruptHandler();
  err(`evesim: metrics stay up on ${servers.metrics.url} for ${Number((lingerMs / 1000).toFixed(1))} s so Prometheus can scrape the final figures (--metrics-linger; Ctrl-C ends this now)\n`);
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const s of STOP_SIGNALS) process.off(s, done);
      opts.endMetricsLinger?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, lingerMs);
    for (const s of STOP_SIGNALS) process.once(s, done);
    if (opts.endMetricsLinger?.aborted) done();
    else opts.endMetricsLinger?.addEventListener('abort', done, { once: true });
  });
}
