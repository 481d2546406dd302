// `evesim controller` as its own process (compiled CLI): `--v1-port PORT` puts the controller API
// v1 listener (mutual TLS) on that port, and `evesim run --controller URL --insecure-skip-verify`
// without `--root-ca` onboards devices against it (TLS and the /certs chain unchecked, both
// warned about). Needs `npm run build` first.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../src/runner/summary-json.js';

const cli = fileURLToPath(new URL('../bin/evesim.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'evesim-standalone-'));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

let v1Port: number;
let controller: ChildProcess;
let exited: Promise<number | null>;
let out = '';
let err = '';

/** The first match of `re` in what the controller printed, waiting up to 60 s. */
function printed(re: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = re.exec(out);
      if (!m) return false;
      clearInterval(poll);
      clearTimeout(timer);
      resolve(m);
      return true;
    };
    const poll = setInterval(check, 50);
    const timer = setTimeout(() => {
      clearInterval(poll);
      reject(new Error(`the controller printed no ${re} within 60 s; stdout: ${out} stderr: ${err}`));
    }, 60_000);
    check();
  });
}

beforeAll(async () => {
  v1Port = await freePort();
  controller = spawn(process.execPath, [cli, 'controller', '--port', '0', '--admin-port', '0', '--v1-port', String(v1Port), '--state-dir', join(dir, 'ctl')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  controller.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  controller.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  exited = new Promise((resolve) => controller.once('exit', (code) => resolve(code)));
}, 10_000);

afterAll(async () => {
  controller.kill('SIGTERM');
  await exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('evesim controller', () => {
  it('--v1-port: serves controller API v1 on the port given', async () => {
    const line = await printed(/controller API v1 on \S+/);
    expect(line[0]).toBe(`controller API v1 on https://127.0.0.1:${v1Port}`);
    expect(await connects(v1Port)).toBe(true);
  }, 90_000);

  it('evesim run --insecure-skip-verify without --root-ca onboards against it, with both warnings', async () => {
    const [, url] = await printed(/listening on (https:\/\/127\.0\.0\.1:\d+)/);
    const [, cert, key] = await printed(/--onboard-cert (\S+) --onboard-key (\S+)/);
    const scenario = join(dir, 'insecure.yaml');
    writeFileSync(scenario, 'name: insecure\nduration: 3s\ngracefulStop: 2s\narrival: { model: uniform, over: 500ms }\ngroups:\n  - name: kvm\n    count: 2\nthresholds:\n  - onboarded.count == 2\n');
    const summaryFile = join(dir, 'insecure.json');
    const r = spawnSync(
      process.execPath,
      [cli, 'run', scenario, '--controller', url!, '--insecure-skip-verify', '--onboard-cert', cert!, '--onboard-key', key!, '--quiet', '--workers', '1', '--state-dir', join(dir, 'state'), '--summary-json', summaryFile],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.stderr).toContain('evesim: WARNING: TLS verification of the controller is OFF (--insecure-skip-verify)');
    expect(r.stderr).toContain("evesim: WARNING: no --root-ca: the devices take the controller's signing certificates without checking their chain");
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as RunSummary;
    expect(summary.devices.onboarded).toBe(2);
    expect(summary.findings.byKind['bad-certs'] ?? 0).toBe(0);
  }, 90_000);
});
