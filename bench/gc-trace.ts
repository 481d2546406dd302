// Reads V8's `--trace-gc` lines (what `node --trace-gc` prints for every isolate, worker threads
// included) and sums them per isolate: young-generation scavenges, and each full mark-compact cycle
// with the incremental marking the thread did itself before the final pause. The final pause is
// what trace lines lead with; the incremental marking steps ("+ 158.2 ms in 227 steps since start
// of marking … walltime since start of marking 313 ms") ran on the same thread within that
// walltime, so a cycle can hold the event loop far longer than its final pause says.

export interface GcLine {
  /** The isolate's address as printed: one per thread. */
  isolate: string;
  /** Milliseconds since the isolate started. */
  atMs: number;
  kind: 'scavenge' | 'mark-compact' | 'other';
  /** The final pause (the first of V8's two figures). */
  pauseMs: number;
  /** Mark-compact only: incremental marking on this thread since marking began, and its walltime. */
  incrementalMs?: number;
  incrementalSteps?: number;
  biggestStepMs?: number;
  markingWalltimeMs?: number;
}

const LINE = /^\[\d+:(0x[0-9a-f]+)\]\s+(\d+) ms: (Scavenge|Mark-Compact|Mark-sweep|[A-Za-z-]+)\b.*?MB, ([0-9.]+) \/ [0-9.]+ ms/;
const INCREMENTAL = /\+ ([0-9.]+) ms in (\d+) steps since start of marking, biggest step ([0-9.]+) ms, walltime since start of marking (\d+) ms/;

/** One trace line, or undefined for any other line (the run's own output shares the stream). */
export function parseGcLine(line: string): GcLine | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const kind = m[3] === 'Scavenge' ? 'scavenge' : m[3] === 'Mark-Compact' || m[3] === 'Mark-sweep' ? 'mark-compact' : 'other';
  const out: GcLine = { isolate: m[1]!, atMs: Number(m[2]), kind, pauseMs: Number(m[4]) };
  const inc = kind === 'mark-compact' ? INCREMENTAL.exec(line) : null;
  if (inc) {
    out.incrementalMs = Number(inc[1]);
    out.incrementalSteps = Number(inc[2]);
    out.biggestStepMs = Number(inc[3]);
    out.markingWalltimeMs = Number(inc[4]);
  }
  return out;
}

export interface IsolateGc {
  isolate: string;
  /** From the isolate's start to its last traced GC. */
  spanS: number;
  scavenges: { count: number; totalMs: number; maxMs: number };
  markCompacts: {
    count: number;
    /** Final pauses. */
    pauseMaxMs: number;
    /** Incremental marking this thread did per cycle (median, most). */
    incrementalMedianMs: number;
    incrementalMaxMs: number;
    /** Walltime from the start of marking to the final pause, in the cycle that marked most. */
    walltimeOfMaxMs: number;
    /** Final pause plus this thread's incremental marking, the cycle where that is largest. */
    worstCycleMs: number;
  };
  /** Scavenges, final pauses and incremental marking, as a share of the span: this thread's GC time. */
  threadShare: number;
  /** Traced lines after `fromMs` only (see summariseGc). */
  fromMs: number;
}

const median = (xs: number[]): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/**
 * Per isolate, in the order first seen (the process's main thread prints first). `fromFraction`
 * leaves out the start of each isolate's life (0.5: only its second half, which for a fleet worker
 * is the steady state rather than onboarding).
 */
export function summariseGc(text: string, fromFraction = 0): IsolateGc[] {
  const byIsolate = new Map<string, GcLine[]>();
  for (const line of text.split('\n')) {
    const g = parseGcLine(line);
    if (!g) continue;
    let list = byIsolate.get(g.isolate);
    if (!list) byIsolate.set(g.isolate, (list = []));
    list.push(g);
  }
  const out: IsolateGc[] = [];
  for (const [isolate, all] of byIsolate) {
    const lastMs = all[all.length - 1]!.atMs;
    const fromMs = lastMs * fromFraction;
    const lines = all.filter((g) => g.atMs >= fromMs);
    const sc = lines.filter((g) => g.kind === 'scavenge');
    const mc = lines.filter((g) => g.kind === 'mark-compact');
    const inc = mc.map((g) => g.incrementalMs ?? 0);
    let worst: GcLine | undefined;
    for (const g of mc) if (!worst || g.pauseMs + (g.incrementalMs ?? 0) > worst.pauseMs + (worst.incrementalMs ?? 0)) worst = g;
    const maxInc = mc.reduce<GcLine | undefined>((a, g) => (!a || (g.incrementalMs ?? 0) > (a.incrementalMs ?? 0) ? g : a), undefined);
    const gcMs = lines.reduce((s, g) => s + g.pauseMs + (g.incrementalMs ?? 0), 0);
    const spanMs = lastMs - fromMs;
    out.push({
      isolate,
      spanS: lastMs / 1000,
      scavenges: { count: sc.length, totalMs: sc.reduce((s, g) => s + g.pauseMs, 0), maxMs: Math.max(0, ...sc.map((g) => g.pauseMs)) },
      markCompacts: {
        count: mc.length,
        pauseMaxMs: Math.max(0, ...mc.map((g) => g.pauseMs)),
        incrementalMedianMs: median(inc),
        incrementalMaxMs: Math.max(0, ...inc),
        walltimeOfMaxMs: maxInc?.markingWalltimeMs ?? 0,
        worstCycleMs: worst ? worst.pauseMs + (worst.incrementalMs ?? 0) : 0,
      },
      threadShare: spanMs > 0 ? gcMs / spanMs : 0,
      fromMs,
    });
  }
  return out;
}

/** The isolates that lived at least half as long as the longest one: a run's fleet workers (and its main thread). */
export function longLived(isolates: IsolateGc[]): IsolateGc[] {
  const longest = Math.max(0, ...isolates.map((i) => i.spanS));
  return isolates.filter((i) => i.spanS >= longest / 2);
}

/** One line per isolate for the bench's output. */
export function describeGc(i: IsolateGc, label: string): string {
  const m = i.markCompacts;
  const perMin = (n: number) => (i.spanS - i.fromMs / 1000 > 0 ? (n * 60) / (i.spanS - i.fromMs / 1000) : 0);
  return (
    `${label}: GC ${(100 * i.threadShare).toFixed(1)} % of the thread's time; ` +
    `${perMin(i.scavenges.count).toFixed(0)} scavenges a minute (longest ${i.scavenges.maxMs.toFixed(1)} ms); ` +
    `${perMin(m.count).toFixed(1)} mark-compacts a minute: final pause at most ${m.pauseMaxMs.toFixed(1)} ms, but incremental marking on the thread itself ` +
    `${m.incrementalMedianMs.toFixed(0)} ms per cycle (median), at most ${m.incrementalMaxMs.toFixed(0)} ms within ${m.walltimeOfMaxMs} ms`
  );
}
