// Who is asking on the v1 port: the TLS client certificate of the connection (mutual TLS,
// docs/interfaces.md, v1 "Authentication"). The server asks for a certificate but lets every
// handshake through (requestCert, rejectUnauthorized false) and judges it here, per request, so
// that a refused certificate gets the document's HTTP status (401 or 403) instead of a TLS alert:
//   none presented                                   → 'none'      (401)
//   exactly the DER of a registered device certificate → 'device'
//   chains to a trusted onboarding CA                  → 'onboarding' (register, ping; else 403)
//   anything else                                      → 'invalid'   (401)
// The certificate is parsed once per connection (resumed sessions keep it); the registry lookup is
// made per request, because a certificate can become registered while its connection is open.

import { createHash, X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { derToPem } from '../../protocol/pem.js';
import type { ControllerContext } from './controller-context.js';
import type { DeviceRecord } from './device-record.js';
import { certHashKey } from './device-registry.js';
import { OnboardingTrustError } from './onboarding-trust.js';

/** The client certificate of one connection. */
export interface V1Peer {
  /** The leaf certificate, or undefined when the client presented none. */
  cert: X509Certificate | undefined;
  /** certHashKey of SHA-256 over the leaf DER (the registry's key); '' without a certificate. */
  hashKey: string;
  /** The chain the client sent, leaf first, as PEM (for the onboarding CA check). */
  chainPem: string;
}

export type V1Identity =
  | { kind: 'none' }
  | { kind: 'device'; device: DeviceRecord }
  | { kind: 'onboarding'; fingerprint: string }
  | { kind: 'invalid'; reason: string };

const NO_PEER: V1Peer = { cert: undefined, hashKey: '', chainPem: '' };
const peers = new WeakMap<TLSSocket, V1Peer>();

/** The connection's client certificate, parsed on the first request of the connection. */
export function peerOf(socket: TLSSocket): V1Peer {
  let p = peers.get(socket);
  if (!p) {
    p = readPeer(socket);
    peers.set(socket, p);
  }
  return p;
}

/** A peer from certificate PEM (tests, and callers that are not behind a TLS socket). */
export function peerFromPem(pem: string | undefined): V1Peer {
  if (pem === undefined) return NO_PEER;
  const cert = new X509Certificate(pem);
  return { cert, hashKey: certHashKey(createHash('sha256').update(cert.raw).digest()), chainPem: pem };
}

function readPeer(socket: TLSSocket): V1Peer {
  const leaf = socket.getPeerX509Certificate();
  if (!leaf) return NO_PEER;
  // Intermediates the client sent, for an onboarding certificate issued below the trusted CA.
  const chain: string[] = [derToPem(leaf.raw)];
  let link = socket.getPeerCertificate(true)?.issuerCertificate;
  const seen = new Set<string>([leaf.fingerprint256]);
  while (link && link.raw && !seen.has(link.fingerprint256)) {
    seen.add(link.fingerprint256);
    chain.push(derToPem(link.raw));
    link = link.issuerCertificate;
  }
  return { cert: leaf, hashKey: certHashKey(createHash('sha256').update(leaf.raw).digest()), chainPem: chain.join('') };
}

/** What the connection's certificate makes the client. */
export function identify(ctx: ControllerContext, peer: V1Peer, now: number): V1Identity {
  if (!peer.cert) return { kind: 'none' };
  const device = ctx.registry.byCert(peer.hashKey);
  if (device) return { kind: 'device', device };
  try {
    return { kind: 'onboarding', fingerprint: ctx.onboarding.check(peer.cert, peer.chainPem, now).fingerprint };
  } catch (e) {
    if (!(e instanceof OnboardingTrustError)) throw e;
    return { kind: 'invalid', reason: `not a registered device certificate, and ${e.message}` };
  }
}
