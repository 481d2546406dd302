// Whether a PEM text holds certificates that parse, checked before identities are made so a
// truncated or mangled --root-ca / --onboard-cert is bad input (exit 2), not a worker failure.

import { X509Certificate } from 'node:crypto';

const BLOCK = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g;

/** Why the text's certificates do not parse, or undefined when every one does (at least one). */
export function pemCertificateProblem(pem: string): string | undefined {
  const blocks = [...pem.matchAll(BLOCK)];
  if (blocks.length === 0) return 'no complete PEM certificate (a BEGIN CERTIFICATE line without its END line?)';
  for (const [i, b] of blocks.entries()) {
    try {
      new X509Certificate(b[0]);
    } catch (e) {
      return `certificate #${i + 1} does not parse (${(e as Error).message.split('\n')[0]})`;
    }
  }
  return undefined;
}
