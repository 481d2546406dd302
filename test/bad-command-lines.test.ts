// Bad command lines through the compiled CLI (bin/evesim.js, a child process each): exit 2 and one
// line on stderr naming the flag (or file) and what was wrong, before anything is made: every
// `run` case also carries --dry-run, so a check that did not fire would end 0 having started
// nothing rather than start devices. URL and file flags, limits past Node's timer or the memory of
// a worker, output paths that cannot be written, the standalone controller's flags.
// cli-run-args.test.ts has the library-level --controller URL case; it is not repeated here.
// Needs `npm run build` first.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateControllerPki } from '../src/identity/controller-pki.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const cli = join(root, 'bin/evesim.js');
const tmp = mkdtempSync(join(tmpdir(), 'evesim-bad-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SMOKE = 'scenarios/smoke.yaml';
const f = (name: string) => join(tmp, name);
/** A real controller target whose files are all good (the cases spoil one at a time). */
const good = (over: Record<string, string> = {}): string[] => {
  const flags = { '--controller': 'https://127.0.0.1:1', '--root-ca': f('root.pem'), '--onboard-cert': f('onboard.cert.pem'), '--onboard-key': f('onboard.key.pem'), ...over };
  return Object.entries(flags).flatMap(([k, v]) => [k, v]);
};

/** A port some other server holds for the whole file. */
let takenPort = 0;
const holder = createServer();
afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

beforeAll(async () => {
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  takenPort = (holder.address() as AddressInfo).port;
  const pki = loadOrCreateControllerPki(f('pki'));
  writeFileSync(f('root.pem'), pki.root.certPem);
  writeFileSync(f('onboard.cert.pem'), pki.tls.certPem);
  writeFileSync(f('onboard.key.pem'), pki.tls.keyPem);
  writeFileSync(f('not-pem.txt'), 'hello\n');
  writeFileSync(f('truncated.pem'), pki.root.certPem.split('\n').slice(0, 4).join('\n'));
  writeFileSync(f('garbage.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  writeFileSync(f('key-is-cert.pem'), pki.root.certPem);
});

interface Case {
  name: string;
  args: () => string[];
  /** The one line on stderr: exact text, or a pattern for figures that depend on the machine. */
  line: string | RegExp | (() => string);
  exit?: number;
}

const CASES: Case[] = [
  { name: '--controller with an ftp URL', args: () => ['run', SMOKE, '--dry-run', ...good({ '--controller': 'ftp://controller.example' })], line: 'evesim: --controller: must be an http:// or https:// URL (got "ftp://controller.example")' },
  { name: '--controller without its files', args: () => ['run', SMOKE, '--dry-run', '--controller', 'https://127.0.0.1:1'], line: 'evesim: --controller needs --root-ca, --onboard-cert, --onboard-key' },
  {
    name: '--insecure-skip-verify does not demand --root-ca, only the onboarding files',
    args: () => ['run', SMOKE, '--dry-run', '--controller', 'https://127.0.0.1:1', '--insecure-skip-verify'],
    line: 'evesim: --controller needs --onboard-cert, --onboard-key',
  },
  { name: '--root-ca that does not exist', args: () => ['run', SMOKE, '--dry-run', ...good({ '--root-ca': f('missing.pem') })], line: () => `evesim: controller root CA ${f('missing.pem')}: cannot read (ENOENT)` },
  { name: '--root-ca that is not PEM', args: () => ['run', SMOKE, '--dry-run', ...good({ '--root-ca': f('not-pem.txt') })], line: () => `evesim: controller root CA ${f('not-pem.txt')}: not a PEM certificate (no "BEGIN CERTIFICATE" line)` },
  {
    name: '--root-ca cut short',
    args: () => ['run', SMOKE, '--dry-run', ...good({ '--root-ca': f('truncated.pem') })],
    line: () => `evesim: controller root CA ${f('truncated.pem')}: no complete PEM certificate (a BEGIN CERTIFICATE line without its END line?)`,
  },
  { name: '--root-ca whose certificate does not parse', args: () => ['run', SMOKE, '--dry-run', ...good({ '--root-ca': f('garbage.pem') })], line: new RegExp(`^evesim: controller root CA ${tmp}/garbage\\.pem: certificate #1 does not parse \\(.+\\)$`) },
  { name: '--onboard-cert whose certificate does not parse', args: () => ['run', SMOKE, '--dry-run', ...good({ '--onboard-cert': f('garbage.pem') })], line: new RegExp(`^evesim: onboarding certificate ${tmp}/garbage\\.pem: certificate #1 does not parse \\(.+\\)$`) },
  { name: '--onboard-key that is a certificate', args: () => ['run', SMOKE, '--dry-run', ...good({ '--onboard-key': f('key-is-cert.pem') })], line: new RegExp(`^evesim: onboarding key ${tmp}/key-is-cert\\.pem: not a usable private key \\(.+\\)$`) },
  { name: '--controller-admin that is not a URL', args: () => ['run', SMOKE, '--dry-run', ...good(), '--controller-admin', 'admin'], line: 'evesim: --controller-admin: "admin" is not a URL; expected e.g. http://127.0.0.1:8444' },
  { name: '--controller-v1 without --controller', args: () => ['run', SMOKE, '--dry-run', '--controller-v1', 'https://127.0.0.1:8445'], line: 'evesim: --controller-v1 needs --controller (it is the API v1 address of that controller)' },
  { name: '--controller-v1 over plain http', args: () => ['run', SMOKE, '--dry-run', ...good(), '--controller-v1', 'http://127.0.0.1:8445'], line: 'evesim: --controller-v1: API v1 is mutual TLS: an https:// URL is needed, got "http://127.0.0.1:8445"' },
  { name: '--controller-admin without --controller', args: () => ['run', SMOKE, '--dry-run', '--controller-admin', 'http://127.0.0.1:8444'], line: 'evesim: --controller-admin: needs --controller (the admin API of that controller)' },
  {
    name: '--target with a URL',
    args: () => ['run', SMOKE, '--dry-run', '--target', 'https://127.0.0.1:8443'],
    line: 'evesim: --target: only "embedded" can be given here (got "https://127.0.0.1:8443"); for a real controller give --controller URL with --root-ca, --onboard-cert and --onboard-key',
  },
  { name: '--target embedded with --controller', args: () => ['run', SMOKE, '--dry-run', '--target', 'embedded', ...good()], line: 'evesim: --target: --target embedded and --controller contradict each other; give one' },
  { name: '--duration past the timer limit', args: () => ['run', SMOKE, '--dry-run', '--duration', '100000h'], line: `evesim: ${SMOKE}: --duration: must be at most 596h31m23.647s, the longest timer Node.js can set (got 100000h)` },
  { name: '--graceful-stop past the timer limit', args: () => ['run', SMOKE, '--dry-run', '--graceful-stop', '600h'], line: `evesim: ${SMOKE}: --graceful-stop: must be at most 596h31m23.647s, the longest timer Node.js can set (got 600h)` },
  { name: '--arrival-over without a unit', args: () => ['run', SMOKE, '--dry-run', '--arrival-over', '90'], line: 'evesim: --arrival-over: "90" is not a duration (examples: 90s, 2m, 1h30m)' },
  { name: '--start-at past the timer limit', args: () => ['run', SMOKE, '--dry-run', '--start-at', '+100000h'], line: /^evesim: --start-at: \d{4}-\d\d-\d\dT[\d:.]+Z is more than 596h31m23\.647s ahead, the longest timer Node\.js can set$/ },
  { name: '--devices beyond a fleet', args: () => ['run', SMOKE, '--dry-run', '--devices', '20000000'], line: `evesim: ${SMOKE}: --devices: must be from 1 to 10000000, the most devices of one fleet (got 20000000)` },
  {
    name: '--devices beyond what a worker holds',
    args: () => ['run', SMOKE, '--dry-run', '--devices', '9000000', '--workers', '1'],
    line: /^evesim: --devices: 9000000 devices on one worker, but a worker holds at most \d+ on this machine \(\d+ MiB heap per worker of 1, from \d+ GiB; 96 KiB per device\): run fewer devices, or spread the fleet over machines with --shard i\/n$/,
  },
  { name: '--tick without a unit', args: () => ['run', SMOKE, '--dry-run', '--tick', '50'], line: 'evesim: --tick: "50" is not a duration (examples: 90s, 2m, 1h30m)' },
  { name: '--tick coarser than a second', args: () => ['run', SMOKE, '--dry-run', '--tick', '2s'], line: "evesim: --tick: at most 1s (a coarser grid would move EVE's timers noticeably), got 2s" },
  { name: '--log-memory without a unit', args: () => ['run', SMOKE, '--dry-run', '--log-memory', '8192'], line: 'evesim: --log-memory: "8192" has no unit; expected a size such as 16KiB, 512MiB or 2GiB (also B, kB, MB, GB) (or 0 to keep every waiting log file on disk)' },
  { name: '--log-memory above 64 MiB a device', args: () => ['run', SMOKE, '--dry-run', '--log-memory', '1GiB'], line: 'evesim: --log-memory: at most 64MiB per device, got 1GiB' },
  { name: '--workers 0', args: () => ['run', SMOKE, '--dry-run', '--workers', '0'], line: 'evesim: --workers: must be a whole number ≥ 1 (got 0)' },
  { name: '--metrics-port out of range', args: () => ['run', SMOKE, '--dry-run', '--metrics-port', '70000'], line: 'evesim: --metrics-port: 70000 is not a TCP port (0..65535)' },
  { name: '--metrics-host that is a URL', args: () => ['run', SMOKE, '--dry-run', '--metrics-port', '9464', '--metrics-host', 'http://0.0.0.0'], line: 'evesim: --metrics-host: "http://0.0.0.0" is not an IP address or host name (e.g. 127.0.0.1, 0.0.0.0, ::)' },
  { name: '--summary-json in a directory that does not exist', args: () => ['run', SMOKE, '--dry-run', '--summary-json', f('no/such/dir/s.json')], line: () => `evesim: --summary-json ${f('no/such/dir/s.json')}: directory ${f('no/such/dir')} does not exist or is not writable` },
  { name: '--junit in a directory that does not exist', args: () => ['run', SMOKE, '--dry-run', '--junit', f('nowhere/j.xml')], line: () => `evesim: --junit ${f('nowhere/j.xml')}: directory ${f('nowhere')} does not exist or is not writable` },
  { name: '--state-dir under a file', args: () => ['run', SMOKE, '--dry-run', '--state-dir', f('not-pem.txt/state')], line: () => `evesim: --state-dir ${f('not-pem.txt/state')}: its parent ${f('not-pem.txt')} is not a directory` },
  { name: '--record that is a file', args: () => ['run', SMOKE, '--dry-run', '--record', f('not-pem.txt')], line: () => `evesim: --record ${f('not-pem.txt')}: it is not a directory` },
  { name: 'a scenario file that does not exist', args: () => ['run', f('nope.yaml'), '--dry-run'], line: () => `evesim: ${f('nope.yaml')}: cannot read the file (ENOENT)` },
  { name: 'controller --v1-port out of range', args: () => ['controller', '--state-dir', f('ctl'), '--v1-port', '70000'], line: 'evesim controller: --v1-port: 70000 is not a TCP port (0..65535; 0 picks a free one)' },
  { name: 'controller with one port for two listeners', args: () => ['controller', '--state-dir', f('ctl'), '--port', '9443', '--v1-port', '9443'], line: 'evesim controller: --port and --v1-port are both 9443; each listener needs its own port' },
  { name: 'controller --onboard-ca that does not exist', args: () => ['controller', '--state-dir', f('ctl'), '--onboard-ca', f('missing-ca.pem')], line: () => `evesim controller: --onboard-ca ${f('missing-ca.pem')}: cannot read (ENOENT)` },
  { name: 'controller --onboard-ca that is not PEM', args: () => ['controller', '--state-dir', f('ctl'), '--onboard-ca', f('not-pem.txt')], line: () => `evesim controller: --onboard-ca ${f('not-pem.txt')}: no complete PEM certificate (a BEGIN CERTIFICATE line without its END line?)` },
  {
    name: 'controller --port that another server holds',
    args: () => ['controller', '--state-dir', f('ctl-busy'), '--port', String(takenPort), '--admin-port', '0', '--v1-port', '0'],
    line: () => `evesim controller: --port ${takenPort}: cannot listen on 127.0.0.1:${takenPort} (address already in use 127.0.0.1:${takenPort})`,
  },
  { name: 'controller --state-dir under a file', args: () => ['controller', '--state-dir', f('not-pem.txt/ctl')], line: () => `evesim controller: --state-dir ${f('not-pem.txt/ctl')}: its parent ${f('not-pem.txt')} is not a directory` },
];

function evesim(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`evesim ${args.join(' ')} did not end within 30 s (did it start a run?)`));
    }, 30_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('bad command lines: exit 2 and one line naming the flag and what was wrong', () => {
  it('there are at least 20', () => expect(CASES.length).toBeGreaterThanOrEqual(20));

  it.concurrent.each(CASES)('$name', async (c) => {
    const r = await evesim(c.args());
    expect(r.code, r.stderr).toBe(c.exit ?? 2);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    const line = typeof c.line === 'function' ? c.line() : c.line;
    if (typeof line === 'string') expect(lines[0]).toBe(line);
    else expect(lines[0]).toMatch(line);
    expect(r.stdout).not.toContain('onboarded'); // nothing ran
  }, 40_000);

  it('--target embedded replaces a real-controller target (its files are not checked)', async () => {
    const file = f('external.yaml');
    writeFileSync(file, 'duration: 1m\ntarget:\n  url: https://controller.example\n  rootCa: missing-root.pem\n  onboardCert: missing.cert.pem\n  onboardKey: missing.key.pem\ngroups:\n  - name: kvm\n    count: 2\n');
    const without = await evesim(['run', file, '--dry-run']);
    expect(without.code).toBe(2);
    expect(without.stderr).toContain(`evesim: ${file}:4:11: target.rootCa: file "missing-root.pem" does not exist`);
    const r = await evesim(['run', file, '--dry-run', '--target', 'embedded', '--state-dir', f('state')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('  target: embedded controller\n');
  }, 40_000);

  it('--insecure-skip-verify without --root-ca is taken, with its warnings', async () => {
    const r = await evesim(['run', SMOKE, '--dry-run', '--controller', 'https://127.0.0.1:1', '--insecure-skip-verify', '--onboard-cert', f('onboard.cert.pem'), '--onboard-key', f('onboard.key.pem')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('evesim: WARNING: TLS verification of the controller is OFF (--insecure-skip-verify)');
    expect(r.stderr).toContain("evesim: WARNING: no --root-ca: the devices take the controller's signing certificates without checking their chain");
    expect(r.stdout).toContain('nothing started');
  }, 40_000);
});
