// What the controller keeps per device for attestation: the outstanding nonce (single use), the
// certificates the device posted (ATTEST_REQ_CERT), the integrity token, the escrowed volume keys,
// and how its last quote went (for the admin view and the fleet's outcome counts).

import type { KeyObject } from 'node:crypto';
import type { attest } from '../../gen/eve-types.js';

/** A device certificate posted with ATTEST_REQ_CERT. */
export interface StoredDeviceCert {
  /** SHA-256 hex over the PEM bytes as posted: an identical re-post is recognised by it. */
  pemSha256: string;
  /** ZCertAttr.is_mutable: when false the certificate of this type may not be replaced. */
  isMutable: boolean;
  /** PEM bytes, kept only for the types quote verification needs (restricted signing, endorsement). */
  pem?: Uint8Array;
  /** ZCertMetaData items (e.g. the EK's TPM2B_PUBLIC), kept with `pem`. */
  metaData?: { type: number; data: Uint8Array }[];
  /** Parsed on the first quote that needs it: its public key and whether the device key signed it. */
  checked?: { publicKey: KeyObject; signedByDevice: boolean } | { error: string };
}

export class AttestState {
  /** Nonce handed out by ATTEST_REQ_NONCE and not yet consumed by a quote. */
  nonce: Uint8Array | undefined;
  /** Token issued on the first successful quote; required on /config and STORE_KEYS. */
  integrityToken: Uint8Array | undefined;
  /** Posted certificates by ZCertType number. */
  certs: Map<number, StoredDeviceCert> | undefined;
  /** Volume keys escrowed with STORE_KEYS, returned after a later successful quote. */
  storageKeys: attest.AttestVolumeKey[] | undefined;
  /** Why the last quote was refused, for the admin view. */
  lastQuoteReason: string | undefined;
  /** Short key of that reason (e.g. 'template-mismatch'), for counts. */
  lastQuoteReasonKey: string | undefined;
  attested = false;
  quotes = 0;
  lastQuoteResult = 0;
  /** The last quote carried no PCR values (a device without TPM, "TPM disabled"). */
  lastQuoteEmpty = false;
  /** resetCount of the last verified TPM quote, and how often it changed (TPM resets seen = reboots). */
  lastResetCount: number | undefined;
  tpmResets = 0;

  toJSON(): Record<string, unknown> {
    return {
      attested: this.attested,
      nonceOutstanding: this.nonce !== undefined,
      hasIntegrityToken: this.integrityToken !== undefined,
      certTypes: [...(this.certs?.keys() ?? [])],
      storageKeys: this.storageKeys?.length ?? 0,
      quotes: this.quotes,
      lastQuoteResult: this.lastQuoteResult,
      lastQuoteEmpty: this.lastQuoteEmpty,
      lastQuoteReason: this.lastQuoteReason,
      tpmResets: this.tpmResets,
    };
  }
}
