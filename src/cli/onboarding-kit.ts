// For `evesim controller` run alone: an onboarding CA and one onboarding certificate + key in the
// controller's state directory, so `evesim run --controller ...` has credentials to present, the way
// an EVE installer ships one onboarding certificate for many devices.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFleetCa, issueOnboardingCertificate } from '../identity/fleet-ca.js';
import { generateP256, privateKeyPem } from '../identity/keys.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE, PUBLIC_FILE_MODE, writeNewFile } from '../identity/state-files.js';

export interface OnboardingKit {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export function loadOrCreateOnboardingKit(stateDir: string, now = Date.now()): OnboardingKit {
  const dir = join(stateDir, 'onboarding');
  const kit = { caFile: join(dir, 'onboarding-ca.pem'), certFile: join(dir, 'onboard.cert.pem'), keyFile: join(dir, 'onboard.key.pem') };
  if (existsSync(kit.caFile) && existsSync(kit.certFile) && existsSync(kit.keyFile)) return kit;
  ensurePrivateDir(dir);
  const ca = createFleetCa('standalone-controller', now);
  const { privateKey, publicKey } = generateP256();
  const cert = issueOnboardingCertificate(ca, publicKey, 'evesim-onboarding', now);
  writeNewFile(kit.keyFile, privateKeyPem(privateKey), PRIVATE_FILE_MODE);
  writeNewFile(kit.certFile, cert.pem, PUBLIC_FILE_MODE);
  writeNewFile(kit.caFile, ca.certPem, PUBLIC_FILE_MODE);
  readFileSync(kit.caFile); // fail here, not later, if the directory is unreadable
  return kit;
}
