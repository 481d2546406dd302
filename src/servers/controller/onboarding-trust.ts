// Checks the onboarding certificate of a register request against the trusted onboarding CA(s):
// the certificate that verified the signature must chain to one of them, through any further
// certificates the senderCert PEM carries. Results are cached by certificate fingerprint, since a
// fleet shares few onboarding certificates or at least sends each one more than once.

import { createHash, X509Certificate } from 'node:crypto';
import { pemBlocks } from '../../protocol/pem.js';

export interface TrustedOnboarding {
  /** Hex SHA-256 of the onboarding certificate DER (the identity it registers under). */
  fingerprint: string;
  /** SHA-256 of the DER: what senderCertHash must equal. */
  certHash: Uint8Array;
}

export class OnboardingTrustError extends Error {
  override readonly name = 'OnboardingTrustError';
}

const CACHE_LIMIT = 20_000;

export class OnboardingTrust {
  private readonly roots: X509Certificate[];
  private readonly cache = new Map<string, TrustedOnboarding | OnboardingTrustError>();

  /** `caPems`: trusted onboarding CA certificates (each PEM may hold several). */
  constructor(caPems: readonly string[]) {
    this.roots = caPems.flatMap((pem, i) => parseAll(pem, `trusted onboarding CA #${i + 1}`));
  }

  get configured(): boolean {
    return this.roots.length > 0;
  }

  /**
   * `leaf`: the onboarding certificate that verified the register signature; `bundlePem`: the
   * whole senderCert PEM (may hold intermediates). Throws OnboardingTrustError naming the problem.
   */
  check(leaf: X509Certificate, bundlePem: string, now = Date.now()): TrustedOnboarding {
    const key = leaf.fingerprint256;
    let hit = this.cache.get(key);
    if (!hit) {
      try {
        hit = this.verify(leaf, bundlePem, now);
      } catch (e) {
        hit = e instanceof OnboardingTrustError ? e : new OnboardingTrustError(String((e as Error).message));
      }
      if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
      this.cache.set(key, hit);
    }
    if (hit instanceof OnboardingTrustError) throw hit;
    return hit;
  }

  private verify(leaf: X509Certificate, bundlePem: string, now: number): TrustedOnboarding {
    if (this.roots.length === 0) throw new OnboardingTrustError('no trusted onboarding CA is configured');
    const bundle = parseAll(bundlePem, 'senderCert');
    const name = (c: X509Certificate) => c.subject.replace(/\n/g, ', ');
    let cur = leaf;
    const seen = new Set<string>([leaf.fingerprint256]);
    for (;;) {
      checkValidity(cur, now);
      if (this.roots.some((r) => cur.fingerprint256 === r.fingerprint256 || issuedBy(cur, r))) break;
      const next = bundle.find((c) => !seen.has(c.fingerprint256) && c.ca && issuedBy(cur, c));
      if (!next) throw new OnboardingTrustError(`onboarding certificate "${name(leaf)}" does not chain to a trusted onboarding CA`);
      seen.add(next.fingerprint256);
      cur = next;
    }
    const certHash = new Uint8Array(createHash('sha256').update(leaf.raw).digest());
    return { fingerprint: Buffer.from(certHash).toString('hex'), certHash };
  }
}

function issuedBy(child: X509Certificate, parent: X509Certificate): boolean {
  try {
    return child.checkIssued(parent) && child.verify(parent.publicKey);
  } catch {
    return false;
  }
}

function parseAll(pem: string, what: string): X509Certificate[] {
  let blocks;
  try {
    blocks = pemBlocks(pem).filter((b) => b.type === 'CERTIFICATE');
  } catch (e) {
    throw new OnboardingTrustError(`${what}: ${(e as Error).message}`);
  }
  if (blocks.length === 0) throw new OnboardingTrustError(`${what}: no CERTIFICATE PEM block`);
  return blocks.map((b, i) => {
    try {
      return new X509Certificate(b.der);
    } catch (e) {
      throw new OnboardingTrustError(`${what}: certificate #${i + 1} does not parse: ${(e as Error).message}`);
    }
  });
}

function checkValidity(c: X509Certificate, now: number): void {
  if (now < Date.parse(c.validFrom) || now > Date.parse(c.validTo)) {
    throw new OnboardingTrustError(`certificate "${c.subject.replace(/\n/g, ', ')}" is not valid now (${c.validFrom} – ${c.validTo})`);
  }
}
