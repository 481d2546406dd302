// `evesim controller --sink` in a child process, for the benchmarks that run a fleet against it:
// started on free ports and ready once it has printed every address and its sink-mode banner.

import { spawn } from 'node:child_process';

export interface SinkProcess {
  /** Device API (v2). */
  url: string;
  /** Admin API, for --controller-admin. */
  admin: string;
  /** Root CA the devices trust. */
  rootCa: string;
  /** Onboarding certificate and key for the devices. */
  cert: string;
  key: string;
  stop: () => Promise<void>;
}

/** Starts `cli controller --sink` with its state in `stateDir`; rejects with its output if it is not ready within a minute. */
export async function startSinkProcess(cli: string, stateDir: string): Promise<SinkProcess> {
  const child = spawn(process.execPath, [cli, 'controller', '--sink', '--port', '0', '--admin-port', '0', '--v1-port', '0', '--state-dir', stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const url = /listening on (https:\/\/\S+)/.exec(out)?.[1];
    const admin = /admin API on (http:\/\/\S+)/.exec(out)?.[1];
    const rootCa = /root CA for devices: (\S+)/.exec(out)?.[1];
    const onboard = /--onboard-cert (\S+) --onboard-key (\S+)/.exec(out);
    // The banner comes last: the admin API listens by then (the onboarding line comes first).
    if (url && admin && rootCa && onboard && /SINK MODE/.test(out)) {
      return { url, admin, rootCa, cert: onboard[1]!, key: onboard[2]!, stop: async () => void (child.kill('SIGTERM'), await exited) };
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the sink controller did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The `evesim run` options that point a fleet at this sink and hand it the scenario's fleet. */
export function sinkRunArgs(sink: SinkProcess): string[] {
  return ['--controller', sink.url, '--controller-admin', sink.admin, '--root-ca', sink.rootCa, '--onboard-cert', sink.cert, '--onboard-key', sink.key];
}
