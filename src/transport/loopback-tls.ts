// Throw-away TLS material for loopback servers in tests and benchmarks: a self-signed root CA and a
// server certificate for 127.0.0.1/localhost issued by it. Generated in memory on every call, never
// written anywhere, never used outside 127.0.0.1.

import 'reflect-metadata'; // @peculiar/x509 (tsyringe) needs it loaded first
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

export interface LoopbackTlsMaterial {
  /** Root CA certificate (PEM): what a client trusts. */
  caPem: string;
  /** Server certificate (PEM), issued by the CA, SANs 127.0.0.1, ::1 and localhost. */
  certPem: string;
  /** Server private key (PKCS#8 PEM). Keep it in memory only. */
  keyPem: string;
}

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;

/** Makes a fresh CA and a loopback server certificate (ECDSA P-256, valid one day). */
export async function makeLoopbackTls(commonName = 'evesim loopback'): Promise<LoopbackTlsMaterial> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 24 * 3600_000);

  const caKeys = (await webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=${commonName} CA`,
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const leafKeys = (await webcrypto.subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${commonName} server`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: SIGN,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
        { type: 'dns', value: 'localhost' },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey);
  return {
    caPem: ca.toString('pem'),
    certPem: leaf.toString('pem'),
    keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'),
  };
}

function randomSerial(): string {
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = b[0]! & 0x7f; // positive INTEGER
  return Buffer.from(b).toString('hex');
}
