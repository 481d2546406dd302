// POST /register: the envelope is signed with the onboarding key and carries the onboarding
// certificate (senderCert, base64 of PEM as EVE sends it); the ZRegisterMsg carries the device
// certificate (pemCert, base64 of PEM). Outcomes per controller-api-v2: 201 new, 200 identical
// repeat, 409 different device certificate, 403 pre-registration required and not done.

import { X509Certificate } from 'node:crypto';
import type { register } from '../../gen/eve-types.js';
import { bytesEqual } from '../../protocol/cert-hash.js';
import { Msg } from '../../protocol/messages.js';
import { pemBlocks } from '../../protocol/pem.js';
import type { ControllerContext, Reply, RequestState } from './controller-context.js';
import { openRegisterEnvelope } from './envelope-adapter.js';
import { ControllerHttpError, unauthorized, unprocessable } from './http-error.js';
import { OnboardingTrustError } from './onboarding-trust.js';
import { pemText } from './pem-text.js';

export function handleRegister(ctx: ControllerContext, req: RequestState): Reply {
  const env = openRegisterEnvelope(req.body);
  let onboard;
  try {
    onboard = ctx.onboarding.check(env.onboardCert, env.onboardCertPem, req.now);
  } catch (e) {
    if (e instanceof OnboardingTrustError) throw unauthorized(`onboarding certificate refused: ${e.message}`);
    throw e;
  }
  if (!bytesEqual(env.container.senderCertHash ?? new Uint8Array(0), onboard.certHash)) {
    throw unauthorized('senderCertHash is not the SHA-256 of the onboarding certificate DER');
  }
  return completeRegistration(ctx, req, onboard.fingerprint, env.payload);
}

/**
 * The part of registration after the onboarding certificate was trusted (shared by v2, where it
 * signed the envelope, and v1, where it was the TLS client certificate): decode the ZRegisterMsg,
 * take the device certificate from it and register the pair.
 */
export function completeRegistration(ctx: ControllerContext, req: RequestState, onboardFingerprint: string, payload: Uint8Array): Reply {
  let msg: register.ZRegisterMsg;
  try {
    msg = Msg.ZRegisterMsg.decode(payload);
  } catch (e) {
    throw unprocessable(`payload is not a ZRegisterMsg: ${(e as Error).message}`);
  }
  if (!msg.pemCert || msg.pemCert.length === 0) throw unprocessable('ZRegisterMsg has no pemCert (the device certificate)');
  let deviceCert: X509Certificate;
  try {
    const pem = pemText(msg.pemCert, 'pemCert');
    const block = pemBlocks(pem).find((b) => b.type === 'CERTIFICATE');
    if (!block) throw new Error('no CERTIFICATE PEM block');
    deviceCert = new X509Certificate(block.der);
  } catch (e) {
    throw unprocessable(`pemCert is not a usable device certificate: ${(e as Error).message}`);
  }
  const outcome = ctx.registry.register(
    {
      onboardFingerprint,
      serial: (msg.serial ?? '').trim(),
      softSerial: (msg.softSerial ?? '').trim(),
      deviceCertDer: deviceCert.raw,
      devicePublicKey: deviceCert.publicKey,
    },
    req.now,
  );
  if ('reason' in outcome) throw new ControllerHttpError(outcome.status, outcome.reason);
  req.device = outcome.device;
  return { status: outcome.status };
}
