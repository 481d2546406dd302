// `evesim controller --v1-port PORT` (compiled CLI, a child process): the controller API v1
// listener (mutual TLS) is on the port given, it says so, and it accepts connections there. Needs
// `npm run build` first.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../bin/evesim.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'evesim-v1-port-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

describe('evesim controller --v1-port', () => {
  it('serves controller API v1 on the port given', async () => {
    const v1Port = await freePort();
    const child = spawn(process.execPath, [cli, 'controller', '--port', '0', '--admin-port', '0', '--v1-port', String(v1Port), '--state-dir', join(dir, 'ctl')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no v1 line within 60 s; stdout: ${out} stderr: ${err}`)), 60_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /controller API v1 on \S+/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[0]);
          }
        });
        void exited.then((code) => reject(new Error(`the controller ended (${code}) before listening: ${err}`)));
      });
      expect(line).toBe(`controller API v1 on https://127.0.0.1:${v1Port}`);
      expect(await connects(v1Port)).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('stopping controller');
  }, 90_000);
});
