// The live progress line. On a terminal it rewrites one line every second (log-update); when the
// output is a file or a pipe it prints a plain line every 10 s instead, so CI logs stay readable.
// It goes to stderr: stdout carries the report.

import { createLogUpdate } from 'log-update';
import type { FleetAggregate } from './aggregate.js';

export interface ProgressFigures {
  elapsedMs: number;
  durationMs: number;
  onboarded: number;
  totalDevices: number;
  /** Devices whose last controller request succeeded / failed (absent: not known). */
  healthy?: number;
  failing?: number;
  reqPerSec: number;
  errors: number;
  /** p99 of config requests over the last interval, ms; undefined before any. */
  configP99Ms: number | undefined;
  /** Worst worker's event-loop lag p99, ms, and which worker. */
  worstLoopLagMs: number | undefined;
  worstLoopWorker: number | undefined;
  /** Optional phase note ('preparing identities 1200/10000'). */
  note?: string;
}

/**
 * The one-line text, e.g. `0:12/1:00  onboarded 830/1000 (now healthy 800, failing 30)  1234 req/s
 * errors 3  config p99 45 ms  loop lag p99 12 ms (w1)`. "onboarded" counts devices that ever
 * onboarded; healthy / failing say how they stand now (last controller answer), so a fleet the
 * controller has started refusing does not read as fine.
 */
export function formatProgressLine(f: ProgressFigures): string {
  const health = f.healthy === undefined || f.failing === undefined ? '' : ` (now healthy ${f.healthy}, failing ${f.failing})`;
  const parts = [
    `${clock(f.elapsedMs)}/${clock(f.durationMs)}`,
    `onboarded ${f.onboarded}/${f.totalDevices}${health}`,
    `${Math.round(f.reqPerSec)} req/s`,
    `errors ${f.errors}`,
    `config p99 ${f.configP99Ms === undefined ? '-' : ms(f.configP99Ms)}`,
    `loop lag p99 ${f.worstLoopLagMs === undefined ? '-' : ms(f.worstLoopLagMs)}${f.worstLoopWorker === undefined ? '' : ` (w${f.worstLoopWorker})`}`,
  ];
  if (f.note) parts.push(f.note);
  return parts.join('  ');
}

function clock(msValue: number): string {
  const total = Math.max(0, Math.floor(msValue / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

function ms(v: number): string {
  if (v >= 10_000) return `${(v / 1000).toFixed(1)} s`;
  if (v >= 10) return `${Math.round(v)} ms`;
  return `${v.toFixed(1)} ms`;
}

export interface ProgressViewOptions {
  aggregate: FleetAggregate;
  totalDevices: number;
  durationMs: number;
  stream?: NodeJS.WriteStream;
  /** Overrides stream.isTTY (tests). */
  tty?: boolean;
  now?: () => number;
}

export class ProgressView {
  private timer: NodeJS.Timeout | undefined;
  private startMs = 0;
  private lastAt = 0;
  private lastRequests = 0;
  private note: string | undefined;
  private stopped = false;
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;
  private readonly now: () => number;
  private readonly update: ReturnType<typeof createLogUpdate> | undefined;

  constructor(private readonly opts: ProgressViewOptions) {
    this.stream = opts.stream ?? process.stderr;
    this.tty = opts.tty ?? this.stream.isTTY === true;
    this.now = opts.now ?? Date.now;
    this.update = this.tty ? createLogUpdate(this.stream) : undefined;
  }

  /** Starts the clock of the run (elapsed counts from here). */
  start(startMs = this.now()): void {
    this.startMs = startMs;
    this.lastAt = startMs;
    this.lastRequests = this.opts.aggregate.totalRequests;
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => this.render(), this.tty ? 1000 : 10_000);
    this.timer.unref();
  }

  /** A note for phases before or around the run ('preparing identities 1200/10000'). */
  setNote(note: string | undefined): void {
    this.note = note;
    if (this.tty && !this.timer) this.update?.(note ?? '');
  }

  figures(): ProgressFigures {
    const agg = this.opts.aggregate;
    const now = this.now();
    const dt = (now - this.lastAt) / 1000;
    const reqPerSec = dt > 0 ? (agg.totalRequests - this.lastRequests) / dt : 0;
    this.lastAt = now;
    this.lastRequests = agg.totalRequests;
    const worst = agg.worstCurrentLoop();
    const health = agg.health();
    return {
      elapsedMs: Math.min(now - this.startMs, this.opts.durationMs),
      durationMs: this.opts.durationMs,
      onboarded: agg.onboardedEver(),
      totalDevices: this.opts.totalDevices,
      ...(health ? { healthy: health.healthy, failing: health.failing } : {}),
      reqPerSec,
      errors: agg.totalErrors,
      configP99Ms: agg.takeRecent('config', 99),
      worstLoopLagMs: worst?.loop.p99Ms,
      worstLoopWorker: worst?.workerId,
      note: this.note,
    };
  }

  render(): void {
    const line = formatProgressLine(this.figures());
    if (this.update) this.update(line);
    else this.stream.write(line + '\n');
  }

  /** Final render and release of the terminal line. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.update) {
      if (this.startMs > 0) this.render();
      else this.update.clear(); // never started: only a preparation note was shown
      this.update.done();
    }
  }
}
