// Runs this command again in a child process with jemalloc preloaded (allocator-plan.ts says when),
// and stands in for it: the parent forwards the signals a user or a supervisor sends, and exits as
// the child did (same code, or killed by the same signal). The child has its own process group, so a
// Ctrl-C at the terminal reaches it once, through the parent, not twice. If the parent is killed
// outright (SIGKILL, which it cannot forward), the child notices its IPC channel closing and kills
// itself the same way, so no run is left orphaned. Ctrl-Z and `fg` stop and continue both.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { planAllocator, REEXEC_MARKER } from './allocator-plan.js';

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGWINCH'];

/**
 * The entry point's first step (bin/evesim.js): re-executes `script` under jemalloc when the plan says
 * so (then never returns), exits 2 on a bad EVESIM_ALLOCATOR, else returns and the command runs here.
 */
export async function startUnderPreferredAllocator(script: string): Promise<void> {
  const args = process.argv.slice(2);
  const plan = planAllocator({ args, execArgv: process.execArgv, env: process.env, platform: process.platform, arch: process.arch, exists: existsSync });
  if (plan.action === 'fail') {
    process.stderr.write(`evesim: ${plan.message}\n`);
    process.exit(2);
  }
  if (plan.action === 'reexec') await reexecUnder(script, args, plan.env);
  followParent();
}

/** Starts `script args` again under `env`; never resolves (the process ends as the child does). */
export function reexecUnder(script: string, args: readonly string[], env: Record<string, string | undefined>): Promise<never> {
  return new Promise<never>(() => {
    const child = spawn(process.execPath, [...process.execArgv, script, ...args], {
      env,
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
      detached: true,
    });
    const on = (signal: NodeJS.Signals, handler: () => void) => {
      process.on(signal, handler);
      return () => void process.off(signal, handler);
    };
    const forwarders = [
      ...FORWARDED.map((signal) => on(signal, () => void child.kill(signal))),
      // Ctrl-Z stops the terminal's foreground group, the parent alone; a SIGTSTP sent on would be
      // discarded (the child's group has no parent in its session), so the child gets SIGSTOP,
      // then the parent stops itself. `fg` continues the parent, which continues the child.
      on('SIGTSTP', () => {
        child.kill('SIGSTOP');
        process.kill(process.pid, 'SIGSTOP');
      }),
      on('SIGCONT', () => void child.kill('SIGCONT')),
    ];
    child.once('error', (e) => {
      process.stderr.write(`evesim: cannot start ${process.execPath} again with ${env.LD_PRELOAD} preloaded: ${e.message}; EVESIM_ALLOCATOR=system runs without it\n`);
      process.exit(2);
    });
    child.once('exit', (code, signal) => {
      forwarders.forEach((off) => off());
      if (signal) {
        // Die of the same signal; the exit code a shell would show, should the signal not end us.
        process.exitCode = 128 + (constants.signals[signal] ?? 0);
        process.kill(process.pid, signal);
      } else process.exit(code ?? 1);
    });
  });
}

/** In the re-executed child: die with the parent (see above). Does nothing in any other process. */
export function followParent(): void {
  if (!process.env[REEXEC_MARKER] || !process.channel) return;
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
  // The channel must not keep the run alive once its work is done.
  process.channel.unref();
}
