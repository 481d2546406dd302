// `evesim run` re-executed under jemalloc (src/cli/reexec-under-allocator.ts), end to end through
// bin/evesim.js: the run reports the allocator it ran on; a SIGINT or SIGTERM sent to the process the
// user started reaches the run once (devices stop, the summary is written, the exit code is the run's);
// a parent killed outright takes its run with it; a bad EVESIM_ALLOCATOR is exit 2 with one line.
// Needs `npm run build` first, and libjemalloc2 for the re-execution cases (.ci/run installs it;
// without it they are skipped outside CI and fail in CI).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { jemallocCandidates } from '../src/cli/allocator-plan.js';
import type { RunSummary } from '../src/runner/summary-json.js';

const cli = fileURLToPath(new URL('../bin/evesim.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'evesim-alloc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const haveJemalloc = process.platform === 'linux' && jemallocCandidates(process.arch).some((p) => existsSync(p));
if (!haveJemalloc && process.env.CI) throw new Error('libjemalloc2 is not installed; .ci/run installs it');
// The environment a user has: no allocator chosen, nothing preloaded.
const { EVESIM_ALLOCATOR: _a, LD_PRELOAD: _p, EVESIM_ALLOCATOR_REEXEC: _m, ...userEnv } = process.env;

const SCENARIO = `
name: allocator
seed: 5
duration: 10m
gracefulStop: 1s
target: embedded
arrival: { model: uniform, over: 1s }
groups:
  - name: kvm
    count: 3
`;

function scenarioFile(): string {
  const file = join(dir, 'allocator.yaml');
  writeFileSync(file, SCENARIO);
  return file;
}

/** Resolves once the file holds a line of the run phase (the devices are live). */
async function untilRunning(file: string, run: ChildProcess, out: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(existsSync(file) && /"phase":"run"/.test(readFileSync(file, 'utf8')))) {
    if (run.exitCode !== null || run.signalCode !== null) throw new Error(`the run ended before it started: ${out()}`);
    if (Date.now() > deadline) throw new Error(`no run-phase interval in ${file} within 60 s: ${out()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The fields of /proc/PID/stat after the command in parentheses: [state, ppid, …]. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** PIDs whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return Number(statFields(n)[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The state letter: R running, S sleeping, T stopped, Z zombie. */
function stateOf(pid: number): string {
  return statFields(pid)[0]!;
}

async function until(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not within 30 s: ${what}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** Alive, and not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    return stateOf(pid) !== 'Z';
  } catch {
    return false;
  }
}

interface StartedRun {
  run: ChildProcess;
  series: string;
  summary: string;
  out: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** detached: the started process leads a process group of its own, as a shell's foreground job does. */
function start(tag: string, env: NodeJS.ProcessEnv, detached = false): StartedRun {
  const series = join(dir, `${tag}.jsonl`);
  const summary = join(dir, `${tag}.json`);
  const run = spawn(
    process.execPath,
    [cli, 'run', scenarioFile(), '--quiet', '--workers', '1', '--metrics-linger', '0', '--state-dir', join(dir, `state-${tag}`), '--out', `jsonl=${series}`, '--summary-json', summary],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached },
  );
  let text = '';
  run.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  run.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => run.once('exit', (code, signal) => res({ code, signal })));
  return { run, series, summary, out: () => text, exited };
}

/** A run as the user starts it, once its devices are live, with the PID of its re-executed child. */
async function startRunning(tag: string, detached = false): Promise<StartedRun & { child: number }> {
  const r = start(tag, userEnv, detached);
  try {
    await untilRunning(r.series, r.run, r.out);
    const [child] = childrenOf(r.run.pid!);
    expect(child, 'the re-executed run is a child of the started process').toBeDefined();
    return { ...r, child: child! };
  } catch (e) {
    r.run.kill('SIGKILL');
    throw e;
  }
}

describe.skipIf(!haveJemalloc)('evesim run re-executed under jemalloc', () => {
  it('runs on jemalloc, and a Ctrl-C (SIGINT to the whole process group) stops the devices once and reports', async () => {
    const r = await startRunning('sigint', true);
    const { child } = r;
    try {
      expect(readFileSync(`/proc/${child}/maps`, 'utf8')).toMatch(/libjemalloc/);
      // What a terminal does at Ctrl-C: the signal goes to every process of the foreground group.
      process.kill(-r.run.pid!, 'SIGINT');
      const { code, signal } = await r.exited;
      expect(signal).toBeNull();
      expect(code, r.out()).toBe(0);
      // Once: a second SIGINT, past the run's once-handler, would have killed it.
      expect(r.out().match(/interrupted: stopping devices/g)).toHaveLength(1);
      const s = JSON.parse(readFileSync(r.summary, 'utf8')) as RunSummary;
      expect(s.machine.allocator).toBe('jemalloc');
      expect(s.machine.v8PoolSize).toBe(4);
      expect(s.machine.heapGrowingPercent).toBe(50);
      expect(s.devices.onboarded).toBe(3);
      expect(s.durationMs).toBeLessThan(60_000);
      expect(alive(child)).toBe(false);
    } finally {
      r.run.kill('SIGKILL');
    }
  }, 120_000);

  it('a SIGTERM to the started process alone reaches the run, which stops its devices and reports', async () => {
    const r = await startRunning('sigterm');
    const { child } = r;
    try {
      r.run.kill('SIGTERM');
      expect(await r.exited, r.out()).toEqual({ code: 0, signal: null });
      expect(r.out().match(/SIGTERM: stopping devices and reporting what was measured/g)).toHaveLength(1);
      expect((JSON.parse(readFileSync(r.summary, 'utf8')) as RunSummary).devices.onboarded).toBe(3);
      expect(alive(child)).toBe(false);
    } finally {
      r.run.kill('SIGKILL');
    }
  }, 120_000);

  it('a run killed by a signal (SIGHUP: no handler) takes its parent with it, by the same signal', async () => {
    const r = await startRunning('sighup');
    const { child } = r;
    try {
      r.run.kill('SIGHUP');
      expect(await r.exited).toEqual({ code: null, signal: 'SIGHUP' });
      expect(alive(child)).toBe(false);
    } finally {
      r.run.kill('SIGKILL');
    }
  }, 120_000);

  it('Ctrl-Z (SIGTSTP) stops the run with its parent, and SIGCONT (fg) continues both', async () => {
    const r = await startRunning('sigtstp');
    const { child } = r;
    try {
      r.run.kill('SIGTSTP');
      await until('parent and run stopped', () => stateOf(r.run.pid!) === 'T' && stateOf(child) === 'T');
      r.run.kill('SIGCONT');
      await until('parent and run continued', () => stateOf(r.run.pid!) !== 'T' && stateOf(child) !== 'T');
      // Still a working run: it stops its devices and reports at SIGINT.
      r.run.kill('SIGINT');
      expect(await r.exited, r.out()).toEqual({ code: 0, signal: null });
    } finally {
      r.run.kill('SIGKILL');
    }
  }, 120_000);

  it('a parent killed outright (SIGKILL) takes the run with it', async () => {
    const r = await startRunning('sigkill');
    const { child } = r;
    try {
      r.run.kill('SIGKILL');
      expect((await r.exited).signal).toBe('SIGKILL');
      await until(`run ${child} gone after its parent`, () => !alive(child));
      expect(alive(child), `run ${child} outlived its parent`).toBe(false);
    } finally {
      if (alive(child)) process.kill(child, 'SIGKILL');
    }
  }, 120_000);

  it('EVESIM_ALLOCATOR=system runs in the started process on the system malloc', () => {
    const summary = join(dir, 'system.json');
    const file = join(dir, 'short.yaml');
    writeFileSync(file, SCENARIO.replace('duration: 10m', 'duration: 2s'));
    // A Node flag given by the user reaches the run and its summary, and so does the workers' heap growth.
    const r = spawnSync(process.execPath, ['--v8-pool-size=2', cli, 'run', file, '--quiet', '--workers', '1', '--metrics-linger', '0', '--state-dir', join(dir, 'state-system'), '--summary-json', summary], {
      env: { ...userEnv, EVESIM_ALLOCATOR: 'system', EVESIM_HEAP_GROWING_PERCENT: '0' },
      encoding: 'utf8',
      timeout: 90_000,
    });
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const s = JSON.parse(readFileSync(summary, 'utf8')) as RunSummary;
    expect(s.machine.allocator).toBe('system');
    expect(s.machine.v8PoolSize).toBe(2);
    expect(s.machine.heapGrowingPercent).toBe(0);
    expect(r.stdout).toMatch(/node v\d+\.\d+\.\d+, system malloc, V8 pool of 2 threads, worker heaps grow as V8 chooses/);
  }, 120_000);
});

describe('a bad EVESIM_ALLOCATOR', () => {
  it('is exit 2 with one line naming the variable and what it takes', () => {
    const r = spawnSync(process.execPath, [cli, 'run', 'scenarios/smoke.yaml', '--dry-run'], { env: { ...userEnv, EVESIM_ALLOCATOR: 'tcmalloc' }, encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('evesim: EVESIM_ALLOCATOR=tcmalloc: expected auto, jemalloc, system or the path of a libjemalloc.so\n');
  });
});
