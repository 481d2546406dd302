// A fleet with TPMs, without TPMs and with tampered boots attests against the embedded controller
// (in this process, over HTTPS on 127.0.0.1) through the real shard runner: identities and TPM
// material from a state directory, virtual devices, the controller's quote verification with the
// scenario's PCR templates. Every device must end with exactly the outcome its role implies:
//   TPM, clean boot     → SUCCESS on a verified quote, volume key escrowed, integrity token
//   no TPM              → SUCCESS on an empty quote ("TPM disabled"), no escrow
//   TPM, tampered boot  → QUOTE_FAILED (PCR 9 is not the build's reference), no token
// A second preparation from the same state directory loads the TPM material instead of making it.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attest } from '../src/gen/eve-types.js';
import { VirtualDevice } from '../src/device/virtual-device.js';
import { ShardRunner } from '../src/fleet/shard-runner.js';
import type { FleetDeviceInfo, ShardTask } from '../src/fleet/worker-protocol.js';
import { FleetIdentityStore } from '../src/identity/fleet-identity-store.js';
import { DEFAULT_FIRMWARE_VERSION } from '../src/scenario/scenario-defaults.js';
import type { GroupSpec, Scenario } from '../src/scenario/scenario-types.js';
import { deviceTpmRole, type DeviceTpmRole } from '../src/scenario/attestation/tpm-plan.js';
import { createControllerServer, type ControllerServer } from '../src/servers/controller/controller-server.js';
import { testGroup } from './fixtures/test-group.js';

const EVE = '14.5.2-kvm-amd64';
const SEED = 77;

function group(name: string, count: number, over: Partial<GroupSpec>): GroupSpec {
  return testGroup(name, count, {
    eveVersion: EVE,
    hardware: { ncpu: 2, memoryMB: 1024, storageMB: 4096, model: 'm', manufacturer: 'x' },
    firmwareVersion: DEFAULT_FIRMWARE_VERSION,
    ...over,
  });
}

const GROUPS = [
  group('tpm', 3, { tpmShare: 1 }),
  group('no-tpm', 2, {}),
  group('mixed', 4, { tpmShare: 0.75, tampered: { count: 2 } }), // 3 TPMs, 2 of them tampered, 1 without
];

/** What the controller's record of each device lacks of its role's outcome (empty once all match). */
function outcomeProblems(server: ControllerServer, roles: ReadonlyMap<string, DeviceTpmRole>): string[] {
  const problems: string[] = [];
  const devices = [...server.core.registry.devices()];
  if (devices.length !== roles.size) problems.push(`${devices.length} of ${roles.size} devices registered`);
  for (const dev of devices) {
    const a = dev.attest;
    const role = roles.get(dev.serial);
    const ok =
      a !== undefined &&
      (role === 'tampered'
        ? a.lastQuoteResult === attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED &&
          a.lastQuoteReasonKey === 'template-mismatch' &&
          a.integrityToken === undefined &&
          a.storageKeys === undefined
        : a.lastQuoteResult === attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS &&
          a.lastQuoteEmpty === (role === 'none') &&
          a.integrityToken !== undefined &&
          (a.certs?.has(12) ?? false) === (role === 'tpm') &&
          (a.storageKeys?.length ?? 0) === (role === 'tpm' ? 1 : 0));
    if (!ok) problems.push(`${dev.serial} (${role}): last quote result ${a?.lastQuoteResult}`);
  }
  return problems;
}

function scenario(): Scenario {
  return {
    file: 'attestation-fleet.test',
    name: 'attestation-fleet',
    seed: SEED,
    // An upper bound only: the run phase ends as soon as every device shows the outcome of its role
    // (outcomeProblems), so a loaded machine gets more time instead of a failure. The outcome can
    // take one restarted cycle: a config 403 that comes back after the first quote went out restarts
    // attestation (EVE does the same), and the next cycle starts 15 s later.
    durationMs: 240_000,
    // Also a bound: the graceful stop ends as soon as every queue is delivered.
    gracefulStopMs: 60_000,
    target: { kind: 'embedded' },
    groups: GROUPS,
    arrival: { model: 'all-at-once', ratePerSec: 0 },
    timeline: [],
    thresholds: [],
    attestation: { templates: [{ eveVersion: EVE, firmwareVersion: DEFAULT_FIRMWARE_VERSION, pcrs: 'reference' }] },
  };
}

describe('a mixed fleet attests against the embedded controller', () => {
  let stateDir: string;
  let server: ControllerServer;

  beforeAll(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'evesim-attest-fleet-'));
    const store = FleetIdentityStore.open({ stateDir, seed: SEED });
    server = await createControllerServer({ stateDir: join(stateDir, 'controller'), onboardingCaPems: [store.fleetCaCertPem] });
  });

  afterAll(async () => {
    await server.stop();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('gives every device exactly the outcome of its role', async () => {
    const sc = scenario();
    const task: ShardTask = {
      workerId: 0,
      scenario: sc,
      shard: { firstIndex: 0, stride: 1, count: 9 },
      target: { url: server.url, rootCaPem: server.rootCaPem, insecure: false },
      stateDir,
    };
    const runner = new ShardRunner(task, { createDevice: (o) => new VirtualDevice(o), post: () => {} });
    const prep = await runner.prepare();
    expect(prep.tpm).toMatchObject({ ekCreated: 6, ekLoaded: 0, certsCreated: 6 });
    server.core.registry.setFleet({
      groups: sc.groups,
      devices: prep.devices.map((d: FleetDeviceInfo) => ({ serial: d.serial, group: d.group })),
      attestation: sc.attestation!,
    });
    const roles = new Map<string, DeviceTpmRole>();
    for (const d of prep.devices) {
      const g = GROUPS.findIndex((x) => x.name === d.group);
      const first = GROUPS.slice(0, g).reduce((n, x) => n + x.count, 0);
      roles.set(d.serial, deviceTpmRole(GROUPS[g]!, d.index - first));
    }
    expect([...roles.values()].sort()).toEqual(['none', 'none', 'none', 'tampered', 'tampered', 'tpm', 'tpm', 'tpm', 'tpm']);

    // The run phase ends once every device shows the outcome of its role; the graceful stop follows.
    const watch = setInterval(() => {
      if (outcomeProblems(server, roles).length === 0) runner.endRunPhase();
    }, 200);
    try {
      await runner.run(Date.now() + 100);
    } finally {
      clearInterval(watch);
    }
    expect(outcomeProblems(server, roles), 'the run phase reached its 240 s bound before every device had the outcome of its role').toEqual([]);

    for (const dev of server.core.registry.devices()) {
      const a = dev.attest!;
      const role = roles.get(dev.serial);
      const where = `${dev.serial} (${role})`;
      expect(role, where).toBeDefined();
      if (role === 'tampered') {
        expect(a.lastQuoteResult, where).toBe(attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED);
        expect(a.lastQuoteReasonKey, where).toBe('template-mismatch');
        expect(a.integrityToken, where).toBeUndefined();
        expect(a.storageKeys, where).toBeUndefined();
      } else {
        expect(a.lastQuoteResult, where).toBe(attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS);
        expect(a.lastQuoteEmpty, where).toBe(role === 'none');
        expect(a.integrityToken, where).toBeDefined();
        // EK certificate with its TPM2B_PUBLIC only from TPM devices.
        expect(a.certs?.has(12), where).toBe(role === 'tpm');
        expect(a.storageKeys?.length ?? 0, where).toBe(role === 'tpm' ? 1 : 0);
      }
    }
    expect(server.core.registry.size).toBe(9);
    const outcomes = server.core.stats.attestation.toJSON(server.core.registry.devices());
    expect(outcomes.devices).toEqual({ byLastCode: { QUOTE_FAILED: 2, SUCCESS: 7 }, tpmDisabled: 3, tpmReset: 0 });
  }, 360_000);

  it('a second preparation loads the TPM material from the state directory', async () => {
    const task: ShardTask = {
      workerId: 0,
      scenario: scenario(),
      shard: { firstIndex: 0, stride: 1, count: 9 },
      target: { url: server.url, rootCaPem: server.rootCaPem, insecure: false },
      stateDir,
    };
    const prep = await new ShardRunner(task, { createDevice: (o) => new VirtualDevice(o), post: () => {} }).prepare();
    expect(prep.tpm).toMatchObject({ ekCreated: 0, ekLoaded: 6, certsCreated: 0, certsLoaded: 6 });
  });
});
