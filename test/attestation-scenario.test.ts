// Attestation knobs end to end on the configuration side: which devices get a TPM and a tampered
// boot, scenario validation with file:line errors, the attestation thresholds, the runner's
// Prometheus export of the controller's outcomes, and the EK certificate the device issues.

import { X509Certificate } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createDeviceIdentity } from '../src/identity/device-identity.js';
import { createEkCertificate } from '../src/identity/ek-certificate.js';
import { createFleetCa } from '../src/identity/fleet-ca.js';
import { generateRsa } from '../src/identity/keys.js';
import { AttestationMonitor, attestationReportLines, describeTpmPreparation, type AttestationSummary } from '../src/runner/attestation/attestation-outcomes.js';
import { evaluateThreshold, parseThreshold } from '../src/runner/thresholds.js';
import type { MeasuredRun } from '../src/runner/summary-json.js';
import { parseScenario } from '../src/scenario/load-scenario.js';
import { ScenarioError } from '../src/scenario/scenario-error.js';
import { deviceTpmRole, groupTpmPlan } from '../src/scenario/attestation/tpm-plan.js';

const HEX = 'ab'.repeat(32);

function roles(count: number, tpmShare?: number, tampered?: { count: number } | { share: number }): string {
  const g = { count, ...(tpmShare !== undefined ? { tpmShare } : {}), ...(tampered ? { tampered } : {}) };
  return Array.from({ length: count }, (_, p) => ({ none: '.', tpm: 'T', tampered: 'X' })[deviceTpmRole(g, p)]).join('');
}

describe('which devices have a TPM and which boot tampered', () => {
  it('exact counts, spread evenly over the group', () => {
    expect(roles(4)).toBe('....');
    expect(roles(4, 1)).toBe('TTTT');
    expect(roles(10, 0.6, { count: 2 })).toBe('.T.TX.T.TX');
    expect(roles(4, 0.5)).toBe('.T.T');
    for (const [n, share, t] of [
      [10, 0.6, { count: 2 }],
      [7, 0.5, { share: 0.5 }],
      [100, 0.8, { count: 13 }],
      [3, 1, { count: 9 }], // more tampered than TPMs: all of them
    ] as const) {
      const r = roles(n, share, t);
      const plan = groupTpmPlan({ count: n, tpmShare: share, tampered: t });
      expect(r.replace(/\./g, '').length).toBe(plan.tpmDevices);
      expect(r.replace(/[.T]/g, '').length).toBe(plan.tamperedDevices);
    }
    expect(groupTpmPlan({ count: 10, tpmShare: 0.6, tampered: { count: 2 } })).toEqual({ tpmDevices: 6, tamperedDevices: 2 });
    expect(groupTpmPlan({ count: 7, tpmShare: 0.5, tampered: { share: 0.5 } })).toEqual({ tpmDevices: 4, tamperedDevices: 2 });
    expect(groupTpmPlan({ count: 3, tpmShare: 1, tampered: { count: 9 } })).toEqual({ tpmDevices: 3, tamperedDevices: 3 });
  });
});

describe('scenario: attestation knobs', () => {
  const base = (group: string, extra = '') => `duration: 1m\ngroups:\n  - name: a\n    count: 10\n${group}${extra}`;

  it('normalises tpm, tpmShare, tampered, firmwareVersion and templates', () => {
    const s = parseScenario(
      base(
        '    tpm: true\n    tampered: 20%\n    firmwareVersion: fw-1\n',
        `  - name: b\n    count: 4\n    tpmShare: 0.5\n    tampered: 1\nattestation:\n  templates:\n    - eveVersion: "*"\n      firmwareVersion: fw-1\n      pcrs: { 9: ${HEX.toUpperCase()} }\n`,
      ),
      'ok.yaml',
    );
    expect(s.groups.map((g) => [g.tpmShare, g.tampered, g.firmwareVersion])).toEqual([
      [1, { share: 0.2 }, 'fw-1'],
      [0.5, { count: 1 }, 'EFI Development Kit II / OVMF-0.0.0-02/06/2015'],
    ]);
    expect(s.attestation).toEqual({ templates: [{ eveVersion: '*', firmwareVersion: 'fw-1', pcrs: { 9: HEX } }] });
    expect(s.warnings ?? []).toEqual([
      // group b's build (default firmware) matches no template
      expect.stringMatching(/^ok\.yaml:8:5: groups\[1\]: group "b": no PCR template matches its build .* every TPM quote of its devices fails \(QUOTE_FAILED\)$/),
    ]);
  });

  it('warns that tampered boots pass without templates', () => {
    const s = parseScenario(base('    tpm: true\n    tampered: 1\n'), 'warn.yaml');
    expect(s.warnings).toEqual([
      'warn.yaml:6:15: groups[0].tampered: without attestation.templates nothing tells a tampered boot from a clean one: its log replays to its PCRs, so its quotes verify (SUCCESS)',
    ]);
  });

  it('names file, line and field for every mistake', () => {
    const text = [
      'duration: 1m',
      'groups:',
      '  - name: both',
      '    count: 4',
      '    tpm: true',
      '    tpmShare: 0.5',
      '  - name: none',
      '    count: 4',
      '    tampered: 1',
      '  - name: few',
      '    count: 4',
      '    tpmShare: 0.5',
      '    tampered: 3',
      '  - name: odd',
      '    count: 4',
      '    tpm: true',
      '    tampered: lots',
      'attestation:',
      '  templates:',
      '    - eveVersion: "*"',
      '      firmwareVersion: x',
      '      pcrs: reference',
      '    - eveVersion: e',
      '      firmwareVersion: f',
      '      pcrs:',
      '        24: ' + HEX,
      '        3: abc',
      '',
    ].join('\n');
    let err: ScenarioError | undefined;
    try {
      parseScenario(text, 'bad.yaml');
    } catch (e) {
      err = e as ScenarioError;
    }
    expect(err).toBeInstanceOf(ScenarioError);
    expect(err!.message.split('\n')).toEqual([
      'bad.yaml:6:5: groups[0].tpmShare: give either tpm or tpmShare, not both',
      'bad.yaml:9:15: groups[1].tampered: tampered boots need devices with a TPM: set tpm: true or tpmShare in this group',
      'bad.yaml:13:15: groups[2].tampered: 3 tampered devices, but the group has only 2 with a TPM',
      "bad.yaml:17:15: groups[3].tampered: must be a number of devices (e.g. 2) or a share of the group's TPM devices (e.g. 20%) (got \"lots\")",
      'bad.yaml:22:13: attestation.templates[0].pcrs: "reference" needs an exact eveVersion and firmwareVersion (no "*"): it is the boot of that one build',
      'bad.yaml:26:9: attestation.templates[1].pcrs["24"]: "24" is not a PCR index; expected 0 to 23',
      'bad.yaml:27:12: attestation.templates[1].pcrs["3"]: PCR 3: must be 64 hex digits (a SHA-256 value), got 3 characters',
    ]);
  });
});

const SUMMARY: AttestationSummary = {
  byCode: { SUCCESS: 12, QUOTE_FAILED: 5 },
  tpmDisabled: 4,
  storeKeys: { SUCCESS: 8 },
  failureReasons: { 'template-mismatch': 5 },
  nonces: 17,
  devices: { byLastCode: { SUCCESS: 10, QUOTE_FAILED: 1 }, tpmDisabled: 4, tpmReset: 2 },
};

describe('attestation thresholds', () => {
  const run = (attestation?: AttestationSummary) => ({ attestation }) as unknown as MeasuredRun;
  const check = (expr: string, r = run(SUMMARY)) => evaluateThreshold(parseThreshold(expr), r);

  it('measure quote answers and devices by code', () => {
    expect(check('attestation.QUOTE_FAILED == 5')).toMatchObject({ passed: true, actual: 5 });
    expect(check('attestation.SUCCESS >= 13')).toMatchObject({ passed: false, actual: 12 });
    expect(check('attestation.NONCE_MISMATCH == 0')).toMatchObject({ passed: true, actual: 0 });
    expect(check('attestation.TPM_DISABLED == 4').passed).toBe(true);
    expect(check('attestation.KEYS_ESCROWED == 8').passed).toBe(true);
    expect(check('attestation.ITOKEN_MISMATCH == 0').passed).toBe(true);
    expect(check('attestation_devices.SUCCESS == 10').passed).toBe(true);
    expect(check('attestation_devices.QUOTE_FAILED == 1').passed).toBe(true);
    expect(check('attestation_devices.TPM_RESET == 2').passed).toBe(true);
    expect(check('attestation_devices.TPM_DISABLED == 3')).toMatchObject({ passed: false, actual: 4 });
  });

  it('fail when there are no controller figures, and reject unknown codes at load time', () => {
    expect(check('attestation.SUCCESS >= 0', run(undefined))).toMatchObject({ passed: false, actual: null });
    expect(() => parseThreshold('attestation.QUOTE_FAILD == 1')).toThrow(/has no stat "QUOTE_FAILD" \(did you mean "QUOTE_FAILED"\?\)/);
    expect(() => parseThreshold('attestation_devices.KEYS_ESCROWED == 1')).toThrow(/has no stat/);
    expect(() => parseThreshold('attestation.SUCCESS == many')).toThrow(/is a count/);
  });
});

describe('runner: controller attestation outcomes as Prometheus metrics', () => {
  it('follows the controller totals and exports devices by last answer', async () => {
    let n = 0;
    const stats = [
      { attestation: { ...SUMMARY, byCode: { SUCCESS: 3 }, devices: { ...SUMMARY.devices } } },
      { attestation: SUMMARY },
    ];
    const warnings: string[] = [];
    const monitor = new AttestationMonitor(async () => stats[Math.min(n++, 1)]!, (m) => warnings.push(m));
    const registry = new Registry();
    monitor.register(registry);
    const final = await monitor.final();
    expect(final).toEqual(stats[0]!.attestation);
    expect(await monitor.final()).toEqual(SUMMARY);
    const text = await registry.metrics();
    expect(text).toContain('evesim_controller_attest_outcomes_total{code="SUCCESS"} 12');
    expect(text).toContain('evesim_controller_attest_outcomes_total{code="QUOTE_FAILED"} 5');
    expect(text).toContain('evesim_controller_attest_outcomes_total{code="TPM_DISABLED"} 4');
    expect(text).toContain('evesim_controller_attest_store_keys_total{code="SUCCESS"} 8');
    expect(text).toContain('evesim_controller_attest_failures_total{reason="template-mismatch"} 5');
    expect(text).toContain('evesim_controller_attest_devices{code="TPM_RESET"} 2');
    expect(warnings).toEqual([]);
  });

  it('warns and keeps the last figures when the controller does not answer', async () => {
    const warnings: string[] = [];
    const monitor = new AttestationMonitor(() => Promise.reject(new Error('ECONNREFUSED')), (m) => warnings.push(m));
    expect(await monitor.final()).toBeUndefined();
    expect(warnings).toEqual(['attestation outcomes: controller stats unavailable (ECONNREFUSED)']);
  });

  it('reports outcomes in the text report', () => {
    expect(attestationReportLines(SUMMARY)).toEqual([
      'attestation  quotes: SUCCESS 12, QUOTE_FAILED 5 (4 SUCCESS without TPM); escrow: SUCCESS 8',
      '             devices by last answer: SUCCESS 10, QUOTE_FAILED 1 (4 without TPM); 2 re-attested after a TPM reset',
      '             refused: template-mismatch 5',
    ]);
    expect(attestationReportLines({ ...SUMMARY, byCode: {} })).toEqual([]);
  });

  it('says what the TPM material cost', () => {
    const s = { ekCreated: 4, ekLoaded: 0, ekGenerateMs: 800, certsCreated: 4, certsLoaded: 0, wallMs: 450 };
    expect(describeTpmPreparation([s, s])).toBe('TPM devices: generated 8 RSA-2048 endorsement keys in 0.5 s (200 ms each on the thread pool; kept for the next run)');
    expect(describeTpmPreparation([{ ...s, ekCreated: 0, ekLoaded: 4, wallMs: 12 }])).toMatch(/^TPM devices: 4 endorsement keys and EK certificates loaded/);
    expect(describeTpmPreparation([])).toBeUndefined();
  });
});

describe('EK certificate (type 12)', () => {
  it('is issued by the device key with the device certificate validity, as the attestation certificate is', () => {
    const dev = createDeviceIdentity(createFleetCa('ek-cert-test', Date.now()), 'ek-cert-test', 0, Date.now()).identity;
    const ek = generateRsa(2048);
    const pem = createEkCertificate(ek.publicKey, { privateKey: dev.deviceKey, certPem: dev.deviceCertPem }).pem;
    const c = new X509Certificate(pem);
    const device = new X509Certificate(dev.deviceCertPem);
    expect(c.subject).toBe('C=US\nST=CA\nL=San Francisco\nO=The Linux Foundation\nCN=Device Endorsement Key certificate');
    expect(c.issuer).toBe('O=The Linux Foundation\nCN=EVE');
    expect(c.verify(device.publicKey)).toBe(true);
    expect(c.checkIssued(device)).toBe(true);
    expect([c.validFrom, c.validTo]).toEqual([device.validFrom, device.validTo]);
    expect(c.ca).toBe(false);
    const aki = (p: string) => Buffer.from(new x509.X509Certificate(p).getExtension(x509.AuthorityKeyIdentifierExtension)!.keyId!, 'hex');
    expect(aki(pem)).toEqual(aki(dev.attestCertPem));
    const pc = new x509.X509Certificate(pem);
    expect(pc.getExtension(x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment);
    expect(pc.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth]);
    expect(c.publicKey.export({ format: 'jwk' })).toEqual(ek.publicKey.export({ format: 'jwk' }));
  });
});
