// The metrics linger phase on its own: it waits --metrics-linger after the summary, and Ctrl-C
// (SIGINT) or the caller's signal ends the wait early; without a metrics server or with 0 it
// returns at once.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { lingerMetrics } from '../src/runner/phases/metrics-linger.js';
import type { Servers, Started } from '../src/runner/phases/phase-results.js';
import type { RunContext } from '../src/runner/phases/run-context.js';
import type { RunScenarioOptions } from '../src/runner/run-options.js';

function setup(opts: Partial<RunScenarioOptions>, withMetrics = true) {
  const messages: string[] = [];
  const ctx = { opts: { scenarioFile: 'x.yaml', ...opts }, err: (t: string) => void messages.push(t) } as unknown as RunContext;
  const servers = {
    capabilities: [],
    target: { url: 'x', rootCaPem: '', insecure: false },
    ...(withMetrics ? { metrics: { url: 'http://127.0.0.1:9464/metrics', port: 9464 } } : {}),
  } as unknown as Servers;
  const stopInterruptHandler = vi.fn();
  const started = { stopInterruptHandler } as unknown as Started;
  return { ctx, servers, started, messages, stopInterruptHandler };
}

afterEach(() => vi.useRealTimers());

describe('lingerMetrics', () => {
  it('keeps the metrics up for the linger, saying so and how to end it', async () => {
    vi.useFakeTimers();
    const { ctx, servers, started, messages, stopInterruptHandler } = setup({ metricsLingerMs: 35_000 });
    const before = process.listenerCount('SIGINT');
    let done = false;
    const p = lingerMetrics(ctx, servers, started).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(34_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await p;
    expect(done).toBe(true);
    expect(messages.join('')).toBe(
      'evesim: metrics stay up on http://127.0.0.1:9464/metrics for 35 s so Prometheus can scrape the final figures (--metrics-linger; Ctrl-C ends this now)\n',
    );
    // The run's own Ctrl-C handler (stop the devices) was dropped first.
    expect(stopInterruptHandler).toHaveBeenCalledOnce();
    expect(process.listenerCount('SIGINT')).toBe(before);
  });

  it('ends at Ctrl-C, and leaves no SIGINT handler behind', async () => {
    const { ctx, servers, started } = setup({ metricsLingerMs: 600_000 });
    const before = process.listenerCount('SIGINT');
    const p = lingerMetrics(ctx, servers, started);
    expect(process.listenerCount('SIGINT')).toBe(before + 1);
    process.emit('SIGINT');
    await p;
    expect(process.listenerCount('SIGINT')).toBe(before);
  });

  it('ends at SIGTERM too, and leaves neither handler behind', async () => {
    const { ctx, servers, started } = setup({ metricsLingerMs: 600_000 });
    const before = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
    const p = lingerMetrics(ctx, servers, started);
    expect(process.listenerCount('SIGTERM')).toBe(before[1]! + 1);
    process.emit('SIGTERM');
    await p;
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(before);
  });

  it("ends at the caller's signal, even one fired before", async () => {
    const ac = new AbortController();
    const { ctx, servers, started } = setup({ metricsLingerMs: 600_000, endMetricsLinger: ac.signal });
    const before = process.listenerCount('SIGINT');
    const p = lingerMetrics(ctx, servers, started);
    ac.abort();
    await p;
    const fired = new AbortController();
    fired.abort();
    const again = setup({ metricsLingerMs: 600_000, endMetricsLinger: fired.signal });
    await lingerMetrics(again.ctx, again.servers, again.started);
    expect(process.listenerCount('SIGINT')).toBe(before);
  });

  it('does not wait with 0, or without a metrics server', async () => {
    const zero = setup({ metricsLingerMs: 0 });
    await lingerMetrics(zero.ctx, zero.servers, zero.started);
    expect(zero.messages).toEqual([]);
    const none = setup({ metricsLingerMs: 35_000 }, false);
    await lingerMetrics(none.ctx, none.servers, none.started);
    expect(none.messages).toEqual([]);
    expect(none.stopInterruptHandler).not.toHaveBeenCalled();
  });
});
