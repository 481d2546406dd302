// The standalone controller (`evesim controller`) keeps its onboarding kit inside its state
// directory. A first start in a fresh directory must still create the controller PKI there (it once
// crashed with ENOENT on root-certificate.pem and left the directory broken), and later starts load it.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateOnboardingKit } from '../src/cli/onboarding-kit.js';
import { loadOrCreateControllerPki } from '../src/identity/controller-pki.js';

const root = mkdtempSync(join(tmpdir(), 'evesim-ctl-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('controller state directory', () => {
  it('creates the PKI in a directory that already holds the onboarding kit, and loads it on the next start', () => {
    const stateDir = join(root, 'controller');
    const kit = loadOrCreateOnboardingKit(stateDir);
    const first = loadOrCreateControllerPki(stateDir, { rootKeyType: 'ec' });
    expect(readFileSync(join(stateDir, 'root-certificate.pem'), 'utf8')).toBe(first.root.certPem);
    expect(statSync(join(stateDir, 'signing.key.pem')).mode & 0o777).toBe(0o600);
    // The kit is untouched and the second start loads the same PKI instead of making another.
    expect(readFileSync(kit.certFile, 'utf8')).toMatch(/BEGIN CERTIFICATE/);
    const second = loadOrCreateControllerPki(stateDir, { rootKeyType: 'ec' });
    expect(second.root.certPem).toBe(first.root.certPem);
    expect(second.signing.certPem).toBe(first.signing.certPem);
  });

  it('still creates the PKI in a new directory of its own', () => {
    const pki = loadOrCreateControllerPki(join(root, 'fresh', 'pki'), { rootKeyType: 'ec' });
    expect(pki.tls.certPem).toMatch(/BEGIN CERTIFICATE/);
  });
});
