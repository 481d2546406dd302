// The controller an onboarding-storm bench talks to: `evesim controller` (sink mode by default) in a
// child process of its own, so its CPU is not the generator's, on free loopback ports the bench
// picks (never the CLI's defaults 8443-8445, which another run may hold).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface StormController {
  url: string;
  /** Controller API v1 (mutual TLS) on its own port. */
  v1Url: string;
  adminUrl: string;
  rootCaFile: string;
  onboardCertFile: string;
  onboardKeyFile: string;
  /** CPU the controller process used so far, ms (user + system, from /proc). */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** A loopback TCP port nobody listens on now (the kernel's pick, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startStormController(stateDir: string, opts: { sink: boolean }): Promise<StormController> {
  const main = join(fileURLToPath(new URL('.', import.meta.url)), '..', 'src', 'cli', 'main.js');
  const [port, v1Port, adminPort] = [await freePort(), await freePort(), await freePort()];
  const args = [main, 'controller', '--port', String(port), '--v1-port', String(v1Port), '--admin-port', String(adminPort), '--state-dir', stateDir];
  if (opts.sink) args.push('--sink');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    const found: Record<string, string> = {};
    let buf = '';
    child.once('exit', (code) => reject(new Error(`evesim controller exited (${code}) before it was ready: ${stderr.trim()}`)));
    child.stdout!.on('data', (c: Buffer) => {
      buf += c.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines.push(line);
        let m: RegExpExecArray | null;
        if ((m = /--onboard-cert (\S+) --onboard-key (\S+)/.exec(line))) [found.cert, found.key] = [m[1]!, m[2]!];
        if ((m = /^evesim controller listening on (\S+)/.exec(line))) found.url = m[1]!;
        if ((m = /^controller API v1 on (\S+)/.exec(line))) found.v1 = m[1]!;
        if ((m = /^admin API on (\S+)/.exec(line))) found.admin = m[1]!;
        if ((m = /^root CA for devices: (\S+)/.exec(line))) found.ca = m[1]!;
        if (found.url && found.v1 && found.admin && found.ca && found.cert) resolve(found);
      }
    });
  });
  return {
    url: ready.url!,
    v1Url: ready.v1!,
    adminUrl: ready.admin!,
    rootCaFile: ready.ca!,
    onboardCertFile: ready.cert!,
    onboardKeyFile: ready.key!,
    cpuMs: () => processCpuMs(child),
    stop: () => stopChild(child),
  };
}

/** The `controller` option of runScenario for this controller: v2 and v1 addresses, its PKI files, TLS verified. */
export function stormTarget(c: StormController): { url: string; v1Url: string; rootCaFile: string; onboardCertFile: string; onboardKeyFile: string; insecure: false } {
  return { url: c.url, v1Url: c.v1Url, rootCaFile: c.rootCaFile, onboardCertFile: c.onboardCertFile, onboardKeyFile: c.onboardKeyFile, insecure: false };
}

/** utime + stime of a child from /proc/<pid>/stat, ms (Linux, USER_HZ 100; 0 elsewhere). */
function processCpuMs(child: ChildProcess): number {
  try {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 of stat (utime, stime), counted from the state field (3rd) here.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
