// Where TPM quote verification plugs into attestation. The controller handles the empty quote
// ("TPM disabled", as Adam does) itself; a quote with data goes to a QuoteVerifier.

import { attest } from '../../gen/eve-types.js';
import type { StoredDeviceCert } from './attest-state.js';

export interface QuoteVerificationInput {
  deviceUuid: string;
  quote: attest.ZAttestQuote;
  /** The nonce this device was given (single use; consumed by this quote). */
  nonce: Uint8Array;
  /** Certificates the device posted with ATTEST_REQ_CERT, by ZCertType number. */
  certs: ReadonlyMap<number, StoredDeviceCert>;
}

export interface QuoteVerdict {
  code: attest.ZAttestResponseCode;
  /** Why, for the admin view and logs. */
  reason: string;
}

export interface QuoteVerifier {
  verify(input: QuoteVerificationInput): QuoteVerdict;
}

/**
 * Placeholder until software-TPM quotes are verified: no restricted-signing certificate →
 * NO_CERT_FOUND (Adam's order), anything else → QUOTE_FAILED, saying why.
 */
export const noTpmQuoteVerifier: QuoteVerifier = {
  verify({ certs }) {
    if (!certs.get(11 /* CERT_TYPE_DEVICE_RESTRICTED_SIGNING */)?.pem) {
      return { code: attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_NO_CERT_FOUND, reason: 'no restricted-signing (attestation) certificate posted' };
    }
    return { code: attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED, reason: 'TPM quote verification is not available in this controller yet' };
  },
};
