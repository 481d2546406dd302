// The /certs payload (ZControllerCert, eve-wire-facts §4): what EVE demands of it before trusting
// the controller signing certificate, and how Adam builds it.

import { X509Certificate, createHash, type KeyObject } from 'node:crypto';
import { certs, common } from '../gen/eve-types.js';
import { pemSha256, toHex, trimPem, zcertHash16 } from './cert-hash.js';
import { bytesOf } from './decoded-bytes.js';
import { pemBlocks } from './pem.js';

const T = certs.ZCertType;
const ALLOWED_TYPES = new Set<number>([
  T.CERT_TYPE_CONTROLLER_SIGNING,
  T.CERT_TYPE_CONTROLLER_INTERMEDIATE,
  T.CERT_TYPE_CONTROLLER_ECDH_EXCHANGE,
]);
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const ANY_EKU = '2.5.29.37.0';
const MAX_CHAIN = 8;

export type ControllerCertsProblem = 'bad-type' | 'signing-count' | 'no-ecdh' | 'bad-cert' | 'chain';

export class ControllerCertsError extends Error {
  constructor(
    readonly problem: ControllerCertsProblem,
    message: string,
  ) {
    super(message);
    this.name = 'ControllerCertsError';
  }
}

export interface TrustedControllerCerts {
  /** Signing certificate PEM bytes exactly as served in ZCert.cert. */
  signingCertPem: Uint8Array;
  /** SHA-256 over those bytes: what responses must carry in senderCertHash. */
  signingCertPemHash: Uint8Array;
  /** Public key of the signing certificate, for response verification. */
  signingKey: KeyObject;
  signingCert: X509Certificate;
  ecdhCertPems: Uint8Array[];
  /** Sorted hex certHash values: EVE compares this set to decide whether the certs changed. */
  certHashesHex: string[];
}

/** Trusted roots from a PEM text (EVE's /config/root-certificate.pem may hold several). */
export function parseTrustedRoots(rootPem: string | Uint8Array): X509Certificate[] {
  const roots = pemBlocks(rootPem)
    .filter((b) => b.type === 'CERTIFICATE')
    .map((b, i) => {
      try {
        return new X509Certificate(b.der);
      } catch (e) {
        throw new ControllerCertsError('bad-cert', `root certificate #${i + 1} does not parse: ${(e as Error).message}`);
      }
    });
  if (roots.length === 0) throw new ControllerCertsError('bad-cert', 'root certificate file holds no certificate');
  return roots;
}

const typeName = (t: number): string => T[t] ?? `type ${t}`;

/**
 * Checks a decoded ZControllerCert as EVE does (§4.3): only SIGNING, INTERMEDIATE and
 * ECDH_EXCHANGE types; exactly one SIGNING; at least one ECDH_EXCHANGE; SIGNING and every ECDH
 * leaf chain to a trusted root through the INTERMEDIATE certs, with validity and serverAuth
 * checked as Go's x509 Verify does by default.
 */
/** The roots a device holds, or UNCHECKED_CHAIN: no root CA was given (`--insecure-skip-verify`
 *  without `--root-ca`), so signatures and validity are still checked but not the chain. */
export const UNCHECKED_CHAIN = 'unchecked-chain';

export function verifyControllerCerts(
  msg: certs.ZControllerCert,
  roots: X509Certificate[] | typeof UNCHECKED_CHAIN,
  nowMs: number,
): TrustedControllerCerts {
  const list = msg.certs ?? [];
  const parsed = list.map((z, i) => {
    const type = z.type ?? 0;
    if (!ALLOWED_TYPES.has(type)) {
      throw new ControllerCertsError('bad-type', `certs[${i}] has ${typeName(type)}; only SIGNING, INTERMEDIATE and ECDH_EXCHANGE are allowed`);
    }
    const pem = new Uint8Array(bytesOf(z.cert)); // a copy: it outlives the decoded message
    const der = pemBlocks(pem).find((b) => b.type === 'CERTIFICATE')?.der;
    if (!der) throw new ControllerCertsError('bad-cert', `certs[${i}] (${typeName(type)}) holds no PEM certificate`);
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(der);
    } catch (e) {
      throw new ControllerCertsError('bad-cert', `certs[${i}] (${typeName(type)}) does not parse: ${(e as Error).message}`);
    }
    return { index: i, type, pem, cert, certHash: bytesOf(z.certHash) };
  });
  const signing = parsed.filter((p) => p.type === T.CERT_TYPE_CONTROLLER_SIGNING);
  if (signing.length !== 1) throw new ControllerCertsError('signing-count', `expected exactly one SIGNING certificate, got ${signing.length}`);
  const ecdh = parsed.filter((p) => p.type === T.CERT_TYPE_CONTROLLER_ECDH_EXCHANGE);
  if (ecdh.length === 0) throw new ControllerCertsError('no-ecdh', 'no ECDH_EXCHANGE certificate');
  const intermediates = parsed.filter((p) => p.type === T.CERT_TYPE_CONTROLLER_INTERMEDIATE).map((p) => p.cert);

  for (const leaf of [signing[0]!, ...ecdh]) {
    verifyChain(leaf.cert, intermediates, roots, nowMs, `certs[${leaf.index}] (${typeName(leaf.type)}, ${leaf.cert.subject.replace(/\n/g, ', ')})`);
  }
  const s = signing[0]!;
  return {
    signingCertPem: s.pem,
    signingCertPemHash: pemSha256(s.pem),
    signingKey: s.cert.publicKey,
    signingCert: s.cert,
    ecdhCertPems: ecdh.map((e) => e.pem),
    certHashesHex: parsed.map((p) => toHex(p.certHash)).sort(),
  };
}

function checkValidity(cert: X509Certificate, nowMs: number, what: string): void {
  const from = Date.parse(cert.validFrom);
  const to = Date.parse(cert.validTo);
  if (!(nowMs >= from && nowMs <= to)) {
    throw new ControllerCertsError('chain', `${what}: not valid at ${new Date(nowMs).toISOString()} (valid ${cert.validFrom} to ${cert.validTo})`);
  }
}

function allowsServerAuth(cert: X509Certificate): boolean {
  const eku = cert.keyUsage; // node names the ExtendedKeyUsage OIDs "keyUsage"; undefined = no EKU extension
  return !eku || eku.includes(SERVER_AUTH) || eku.includes(ANY_EKU);
}

/** Why a chain stops at `cert`: its subject, the issuer it names, and the roots it was checked against. */
function noIssuerText(what: string, cert: X509Certificate, intermediates: number, roots: X509Certificate[]): string {
  const dn = (name: string) => name.replace(/\n/g, ', ');
  const rootNames = roots.map((r) => dn(r.subject)).join('; ');
  return (
    `${what}: does not chain to the given root (${rootNames}): certificate ${dn(cert.subject)}, issuer ${dn(cert.issuer)}, ` +
    `is signed neither by that root nor by any of the ${intermediates} intermediate certificate(s) served`
  );
}

/** Walks leaf → intermediates → a trusted root, checking signatures, CA flags, validity and EKU. */
function verifyChain(leaf: X509Certificate, intermediates: X509Certificate[], roots: X509Certificate[] | typeof UNCHECKED_CHAIN, nowMs: number, what: string): void {
  checkValidity(leaf, nowMs, what);
  if (!allowsServerAuth(leaf)) throw new ControllerCertsError('chain', `${what}: extended key usage does not allow serverAuth`);
  if (roots === UNCHECKED_CHAIN) return;
  const issuedBy = (child: X509Certificate, parent: X509Certificate): boolean => {
    try {
      return child.checkIssued(parent) && child.verify(parent.publicKey);
    } catch {
      return false;
    }
  };
  let current = leaf;
  const seen = new Set<X509Certificate>();
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    const root = roots.find((r) => r.fingerprint256 === current.fingerprint256 || issuedBy(current, r));
    if (root) {
      checkValidity(root, nowMs, `${what}: root ${root.subject.replace(/\n/g, ', ')}`);
      if (!allowsServerAuth(root)) throw new ControllerCertsError('chain', `${what}: root EKU does not allow serverAuth`);
      return;
    }
    const next = intermediates.find((c) => !seen.has(c) && c.ca && issuedBy(current, c));
    if (!next) throw new ControllerCertsError('chain', noIssuerText(what, current, intermediates.length, roots));
    seen.add(next);
    const name = `${what}: intermediate ${next.subject.replace(/\n/g, ', ')}`;
    checkValidity(next, nowMs, name);
    if (!allowsServerAuth(next)) throw new ControllerCertsError('chain', `${name}: EKU does not allow serverAuth`);
    current = next;
  }
  throw new ControllerCertsError('chain', `${what}: chain longer than ${MAX_CHAIN}`);
}

// ---------------------------------------------------------------------------------------------
// Controller side

export interface BuiltControllerCerts {
  msg: certs.ZControllerCert;
  /** The signing certificate as served (trimmed PEM text) and SHA-256 over it, for sealResponse. */
  signingCertPem: string;
  signingCertPemHash: Uint8Array;
}

/**
 * ZControllerCert as Adam serves it (§4.2): each PEM block of the signing and ECDH files trimmed;
 * type INTERMEDIATE for CA certificates, else SIGNING / ECDH_EXCHANGE by file; hashAlgo
 * SHA256_16BYTES and certHash = first 16 bytes of SHA-256 over the trimmed PEM. Deterministic
 * order (Adam's is random): signing file blocks, then ECDH file blocks.
 */
export function buildControllerCerts(files: { signingPem: string; ecdhPem: string }): BuiltControllerCerts {
  const out: certs.ZCert[] = [];
  let signingCertPem: string | undefined;
  const add = (fileText: string, leafType: number, fileName: string): void => {
    const blocks = pemBlocks(fileText).filter((b) => b.type === 'CERTIFICATE');
    if (blocks.length === 0) throw new Error(`${fileName}: no PEM certificate`);
    for (const b of blocks) {
      const text = trimPem(b.text);
      const isCa = new X509Certificate(b.der).ca;
      const type = isCa ? T.CERT_TYPE_CONTROLLER_INTERMEDIATE : leafType;
      if (type === T.CERT_TYPE_CONTROLLER_SIGNING) signingCertPem = text;
      out.push({
        hashAlgo: common.HashAlgorithm.HASH_ALGORITHM_SHA256_16BYTES,
        certHash: zcertHash16(text),
        type,
        cert: new Uint8Array(Buffer.from(text, 'utf8')),
      });
    }
  };
  add(files.signingPem, T.CERT_TYPE_CONTROLLER_SIGNING, 'signing certificate file');
  add(files.ecdhPem, T.CERT_TYPE_CONTROLLER_ECDH_EXCHANGE, 'ECDH certificate file');
  if (!signingCertPem) throw new Error('signing certificate file holds only CA certificates');
  return { msg: { certs: out }, signingCertPem, signingCertPemHash: pemSha256(signingCertPem) };
}

/** Adam's controllercert_confighash: base64-URL (padded) of SHA-256(signing file bytes ‖ ECDH file bytes). */
export function controllerCertConfigHash(signingFile: Uint8Array | string, ecdhFile: Uint8Array | string): string {
  const digest = createHash('sha256').update(signingFile).update(ecdhFile).digest('base64');
  return digest.replace(/\+/g, '-').replace(/\//g, '_');
}
