// `evesim controller` runs the controller in the foreground: it prints its URLs and root CA path,
// loads the onboarding CA and fleet files it is given, serves, and stops on SIGINT.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, expect, it } from 'vitest';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { ControllerAdminClient } from '../src/servers/controller/controller-admin-client.js';
import { runControllerForeground } from '../src/servers/controller/run-foreground.js';

const dir = mkdtempSync(join(tmpdir(), 'evesim-ctl-fg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('prints where it listens, serves with the given fleet, and stops on SIGINT', async () => {
  const caFile = join(dir, 'onboard-ca.pem');
  writeFileSync(caFile, createFleetCa('fg', Date.now()).certPem);
  const fleetFile = join(dir, 'fleet.json');
  writeFileSync(fleetFile, JSON.stringify({ groups: [{ name: 'lab', apps: [{ name: 'web' }] }], devices: [{ serial: 'S1', group: 'lab' }] }));
  const lines: string[] = [];
  let printed: () => void;
  const ready = new Promise<void>((r) => (printed = r));
  const running = runControllerForeground({
    stateDir: join(dir, 'pki'),
    onboardingCaFiles: [caFile],
    fleetFile,
    out: (l) => {
      lines.push(l);
      if (l.startsWith('root CA')) printed();
    },
  });
  await ready;
  const url = /listening on (\S+)/.exec(lines[0]!)![1]!;
  const adminUrl = /admin API on (\S+)/.exec(lines[1]!)![1]!;
  const rootCaPath = /root CA for devices: (\S+)/.exec(lines[2]!)![1]!;
  expect(lines.some((l) => l.startsWith('warning'))).toBe(false);

  const agent = new Agent({ connect: { ca: readFileSync(rootCaPath, 'utf8') } });
  const ping = await request(`${url}/api/v2/edgedevice/ping`, { dispatcher: agent });
  await ping.body.dump();
  expect(ping.statusCode).toBe(200);
  const admin = new ControllerAdminClient(adminUrl);
  expect((await admin.fleet()).groups).toEqual([{ name: 'lab', apps: ['web'], devices: 0 }]);
  await admin.close();
  await agent.close();

  process.emit('SIGINT');
  await running;
  expect(lines.at(-1)).toBe('stopping controller');
  await expect(request(`${url}/api/v2/edgedevice/ping`, { dispatcher: new Agent({ connect: { ca: readFileSync(rootCaPath, 'utf8') } }) })).rejects.toThrow();
});

it('names a bad fleet file', async () => {
  const bad = join(dir, 'bad-fleet.json');
  writeFileSync(bad, JSON.stringify({ groups: [{ name: 'lab' }], devices: [{ serial: 'S1', group: 'nope' }] }));
  await expect(runControllerForeground({ stateDir: join(dir, 'pki'), fleetFile: bad, out: () => {} })).rejects.toThrow(
    /bad-fleet\.json: devices\[0\]\.group: no group named "nope"/,
  );
});
