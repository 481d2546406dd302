// TPMT_SIGNATURE (Part 2 "TPMS_SIGNATURE_ECC", "TPMS_SIGNATURE_RSA", "TPMT_SIGNATURE"; tpm-facts §7):
//   ECDSA:  u16 0018 | u16 hashAlg | TPM2B r | TPM2B s      (r, s left-padded to the order size)
//   RSASSA: u16 0014 | u16 hashAlg | TPM2B sig              (RSAPSS: 0016, same shape)
// This is the form tpm2_quote -s writes by default.

import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';
import { ecdsaDerFromParts, ecdsaDerParts, padTo } from '../protocol/ecdsa-signature-forms.js';
import { TPM_ALG_ECDSA, TPM_ALG_NULL, TPM_ALG_RSAPSS, TPM_ALG_RSASSA, TPM_ALG_SHA256 } from './tpm-constants.js';

export type TpmtSignature =
  | { sigAlg: typeof TPM_ALG_ECDSA; hashAlg: number; r: Uint8Array; s: Uint8Array }
  | { sigAlg: typeof TPM_ALG_RSASSA | typeof TPM_ALG_RSAPSS; hashAlg: number; sig: Uint8Array }
  | { sigAlg: typeof TPM_ALG_NULL };

export function marshalTpmtSignature(sig: TpmtSignature): Uint8Array {
  const w = new ByteWriter(sig.sigAlg === TPM_ALG_ECDSA ? 72 : 262);
  w.u16be(sig.sigAlg);
  if (sig.sigAlg === TPM_ALG_ECDSA) w.u16be(sig.hashAlg).tpm2b(sig.r).tpm2b(sig.s);
  else if (sig.sigAlg !== TPM_ALG_NULL) w.u16be(sig.hashAlg).tpm2b(sig.sig);
  return w.finish();
}

export function parseTpmtSignature(bytes: Uint8Array, where = 'TPMT_SIGNATURE'): TpmtSignature {
  const r: ByteReader = new ByteReader(bytes, where);
  const sigAlg = r.u16be('sigAlg');
  let out: TpmtSignature;
  if (sigAlg === TPM_ALG_ECDSA) {
    const hashAlg = r.u16be('signature.ecdsa.hash');
    out = { sigAlg, hashAlg, r: r.tpm2b('signature.ecdsa.signatureR', 66), s: r.tpm2b('signature.ecdsa.signatureS', 66) };
  } else if (sigAlg === TPM_ALG_RSASSA || sigAlg === TPM_ALG_RSAPSS) {
    const hashAlg = r.u16be('signature.rsa.hash');
    out = { sigAlg, hashAlg, sig: r.tpm2b('signature.rsa.sig', 512) };
  } else if (sigAlg === TPM_ALG_NULL) {
    out = { sigAlg };
  } else {
    return r.fail('sigAlg', `0x${sigAlg.toString(16).padStart(4, '0')} is not ECDSA, RSASSA, RSAPSS or NULL`, 0);
  }
  r.end();
  return out;
}

/** TPMT_SIGNATURE for an ECDSA r||s signature (P-256: 32 + 32 bytes). */
export function ecdsaTpmtFromRs(rs: Uint8Array, hashAlg = TPM_ALG_SHA256): TpmtSignature {
  const half = rs.length / 2;
  return { sigAlg: TPM_ALG_ECDSA, hashAlg, r: new Uint8Array(rs.subarray(0, half)), s: new Uint8Array(rs.subarray(half)) };
}

/** TPMT_SIGNATURE from a DER ECDSA signature, r and s padded to `size` bytes like the TPM does. */
export function ecdsaTpmtFromDer(der: Uint8Array, hashAlg = TPM_ALG_SHA256, size = 32): TpmtSignature {
  const { r, s } = ecdsaDerParts(der);
  return { sigAlg: TPM_ALG_ECDSA, hashAlg, r: padTo(r, size, 'r'), s: padTo(s, size, 's') };
}

/** DER SEQUENCE{r, s} of an ECDSA TPMT_SIGNATURE (the plain form EVE sends). */
export function ecdsaDerFromTpmt(sig: TpmtSignature): Uint8Array {
  if (sig.sigAlg !== TPM_ALG_ECDSA) throw new TypeError(`TPMT_SIGNATURE sigAlg 0x${sig.sigAlg.toString(16)} is not ECDSA`);
  return ecdsaDerFromParts(sig.r, sig.s);
}
