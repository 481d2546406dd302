// PKI of the embedded controller: root CA → intermediate CA → signing and ECDH leaves (what /certs
// serves, §4), plus a TLS server certificate for 127.0.0.1/localhost under the same root. Made at
// first start, kept in a state directory (keys 0600), reloaded afterwards.
//
// Files (names follow EVE/Eden where they exist): root-certificate.pem, root.key.pem,
// controller-intermediate.pem, intermediate.key.pem, controller-signing.pem, signing.key.pem,
// controller-ecdh.pem, ecdh.key.pem, server.cert.pem, server.key.pem, and pki.json (written last).

import { createPrivateKey, type KeyObject } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { addYears, issueCertificate, randomSerial, wholeSeconds, type IssuedCertificate, type NameAttributes } from './certificate.js';
import { generateP256, generateRsa, privateKeyPem, type KeyPair } from './keys.js';
import { PRIVATE_FILE_MODE, PUBLIC_FILE_MODE, createDirOnce, ensurePrivateDir, writeNewFile } from './state-files.js';

const DAY_MS = 86_400_000;

export interface PkiMember {
  /** PEM file text exactly as stored (trailing newline). */
  certPem: string;
  key: KeyObject;
}

export interface ControllerPki {
  dir: string;
  root: PkiMember;
  intermediate: PkiMember;
  signing: PkiMember;
  ecdh: PkiMember;
  /** TLS server certificate (SAN IP 127.0.0.1, DNS localhost), issued by the root; key also as PEM for node:tls. */
  tls: PkiMember & { keyPem: string };
}

export interface ControllerPkiOptions {
  /** Epoch ms for validity; default now. */
  nowMs?: number;
  /** Root key: ECDSA P-256 (default) or RSA like Eden's root. */
  rootKeyType?: 'ec' | 'rsa';
  /** RSA root size; default 4096 as Eden (key generation takes seconds). */
  rsaBits?: number;
}

const FILES = {
  root: ['root-certificate.pem', 'root.key.pem'],
  intermediate: ['controller-intermediate.pem', 'intermediate.key.pem'],
  signing: ['controller-signing.pem', 'signing.key.pem'],
  ecdh: ['controller-ecdh.pem', 'ecdh.key.pem'],
  tls: ['server.cert.pem', 'server.key.pem'],
} as const;

const ORG = { C: 'US', O: 'evesim embedded controller' } satisfies NameAttributes;

/**
 * Loads the PKI from `dir`, creating it first if `dir` holds none. `dir` may already exist with other
 * files in it (the standalone controller keeps its onboarding kit there): the PKI files are then made
 * beside it and moved in, pki.json last, so a PKI is either whole or absent.
 */
export function loadOrCreateControllerPki(dir: string, opts: ControllerPkiOptions = {}): ControllerPki {
  const marker = join(dir, 'pki.json');
  if (!existsSync(marker)) {
    const fill = (tmp: string) => writePki(tmp, createControllerPki(opts));
    if (!existsSync(dir)) createDirOnce(dir, fill);
    else moveInOnce(dir, marker, fill);
  }
  return loadControllerPki(dir);
}

/** Fills a temporary directory beside `dir` and moves its files into `dir`, `marker` last, unless another process got there first. */
function moveInOnce(dir: string, marker: string, fill: (tmpDir: string) => void): void {
  const tmp = `${dir}.pki-${process.pid}-${Date.now()}`;
  ensurePrivateDir(tmp);
  try {
    fill(tmp);
    const markerName = basename(marker);
    const names = readdirSync(tmp).filter((n) => n !== markerName);
    for (const name of [...names, markerName]) {
      if (existsSync(marker)) return; // made by another process meanwhile: use that one
      renameSync(join(tmp, name), join(dir, name));
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Creates a fresh PKI in memory. */
export function createControllerPki(opts: ControllerPkiOptions = {}): Omit<ControllerPki, 'dir'> {
  const notBefore = wholeSeconds((opts.nowMs ?? Date.now()) - DAY_MS);
  const notAfter = addYears(notBefore, 20);
  const rootKeys = opts.rootKeyType === 'rsa' ? generateRsa(opts.rsaBits ?? 4096) : generateP256();
  const rootName: NameAttributes = { ...ORG, CN: 'evesim Controller Root CA' };
  const root = issueCertificate(
    { serial: randomSerial(), subject: rootName, notBefore, notAfter, publicKey: rootKeys.publicKey, ca: true, keyUsage: ['digitalSignature', 'keyCertSign', 'cRLSign'] },
    rootKeys.privateKey,
  );

  const interKeys = generateP256();
  const interName: NameAttributes = { ...ORG, CN: 'evesim Controller Intermediate CA' };
  const intermediate = issueCertificate(
    {
      serial: randomSerial(),
      subject: interName,
      issuer: rootName,
      notBefore,
      notAfter,
      publicKey: interKeys.publicKey,
      ca: true,
      pathLen: 0,
      keyUsage: ['digitalSignature', 'keyCertSign', 'cRLSign'],
      authorityKeyId: root.subjectKeyId!,
    },
    rootKeys.privateKey,
  );

  const leaf = (cn: string, keyUsage: ('digitalSignature' | 'keyAgreement')[]): { cert: IssuedCertificate; keys: KeyPair } => {
    const keys = generateP256();
    const cert = issueCertificate(
      {
        serial: randomSerial(),
        subject: { ...ORG, CN: cn },
        issuer: interName,
        notBefore,
        notAfter,
        publicKey: keys.publicKey,
        ca: false,
        keyUsage,
        extKeyUsage: ['serverAuth'],
        subjectKeyId: 'auto',
        authorityKeyId: intermediate.subjectKeyId!,
      },
      interKeys.privateKey,
    );
    return { cert, keys };
  };
  const signing = leaf('controller-signing.evesim.local', ['digitalSignature']);
  const ecdh = leaf('controller-ecdh.evesim.local', ['digitalSignature', 'keyAgreement']);

  const tlsKeys = generateP256();
  const tls = issueCertificate(
    {
      serial: randomSerial(),
      subject: { ...ORG, CN: 'localhost' },
      issuer: rootName,
      notBefore,
      notAfter,
      publicKey: tlsKeys.publicKey,
      ca: false,
      keyUsage: ['digitalSignature'],
      extKeyUsage: ['serverAuth'],
      subjectKeyId: 'auto',
      authorityKeyId: root.subjectKeyId!,
      subjectAltName: { dns: ['localhost'], ip: ['127.0.0.1'] },
    },
    rootKeys.privateKey,
  );

  return {
    root: { certPem: root.pem, key: rootKeys.privateKey },
    intermediate: { certPem: intermediate.pem, key: interKeys.privateKey },
    signing: { certPem: signing.cert.pem, key: signing.keys.privateKey },
    ecdh: { certPem: ecdh.cert.pem, key: ecdh.keys.privateKey },
    tls: { certPem: tls.pem, key: tlsKeys.privateKey, keyPem: privateKeyPem(tlsKeys.privateKey) },
  };
}

function writePki(dir: string, pki: Omit<ControllerPki, 'dir'>): void {
  for (const [member, [certFile, keyFile]] of Object.entries(FILES) as [keyof typeof FILES, readonly [string, string]][]) {
    writeNewFile(join(dir, certFile), pki[member].certPem, PUBLIC_FILE_MODE);
    writeNewFile(join(dir, keyFile), privateKeyPem(pki[member].key), PRIVATE_FILE_MODE);
  }
  writeNewFile(join(dir, 'pki.json'), JSON.stringify({ version: 1, files: FILES }) + '\n', PUBLIC_FILE_MODE);
}

export function loadControllerPki(dir: string): ControllerPki {
  const member = (name: keyof typeof FILES): PkiMember & { keyPem: string } => {
    const [certFile, keyFile] = FILES[name];
    const certPem = readFileSync(join(dir, certFile), 'utf8');
    const keyPem = readFileSync(join(dir, keyFile), 'utf8');
    let key: KeyObject;
    try {
      key = createPrivateKey(keyPem);
    } catch (e) {
      throw new Error(`${join(dir, keyFile)}: unusable private key: ${(e as Error).message}`);
    }
    return { certPem, key, keyPem };
  };
  const strip = ({ certPem, key }: PkiMember): PkiMember => ({ certPem, key });
  return {
    dir,
    root: strip(member('root')),
    intermediate: strip(member('intermediate')),
    signing: strip(member('signing')),
    ecdh: strip(member('ecdh')),
    tls: member('tls'),
  };
}
