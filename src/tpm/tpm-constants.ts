// TPM 2.0 numbers used by the software TPM (Library Part 2 "TPM_ALG_ID", "TPM_ECC_CURVE", "TPM_ST",
// "TPM_RH", "TPMA_OBJECT"; see docs/tpm-facts.md §1–§2). Plain constants, so the hot path compares numbers.

export const TPM_ALG_RSA = 0x0001;
export const TPM_ALG_SHA1 = 0x0004;
export const TPM_ALG_AES = 0x0006;
export const TPM_ALG_SHA256 = 0x000b;
export const TPM_ALG_SHA384 = 0x000c;
export const TPM_ALG_SHA512 = 0x000d;
export const TPM_ALG_NULL = 0x0010;
export const TPM_ALG_RSASSA = 0x0014;
export const TPM_ALG_RSAPSS = 0x0016;
export const TPM_ALG_ECDSA = 0x0018;
export const TPM_ALG_ECC = 0x0023;
export const TPM_ALG_CFB = 0x0043;

export const TPM_ECC_NIST_P256 = 0x0003;

/** "\xffTCG": every structure the TPM signs itself starts with it. */
export const TPM_GENERATED_VALUE = 0xff544347;
export const TPM_ST_ATTEST_QUOTE = 0x8018;

export const TPM_RH_OWNER = 0x40000001;
export const TPM_RH_ENDORSEMENT = 0x4000000b;
export const TPM_RH_PLATFORM = 0x4000000c;

/** Digest size in bytes per hash algorithm, for TPMT_HA / TPM2B_DIGEST checks. */
export const DIGEST_SIZE: Readonly<Record<number, number>> = {
  [TPM_ALG_SHA1]: 20,
  [TPM_ALG_SHA256]: 32,
  [TPM_ALG_SHA384]: 48,
  [TPM_ALG_SHA512]: 64,
};

/** node:crypto hash name per TPM hash algorithm. */
export const HASH_NAME: Readonly<Record<number, string>> = {
  [TPM_ALG_SHA1]: 'sha1',
  [TPM_ALG_SHA256]: 'sha256',
  [TPM_ALG_SHA384]: 'sha384',
  [TPM_ALG_SHA512]: 'sha512',
};

/** TPMA_OBJECT bits. */
export const TPMA_OBJECT = {
  fixedTPM: 0x2,
  stClear: 0x4,
  fixedParent: 0x10,
  sensitiveDataOrigin: 0x20,
  userWithAuth: 0x40,
  adminWithPolicy: 0x80,
  noDA: 0x400,
  encryptedDuplication: 0x800,
  restricted: 0x10000,
  decrypt: 0x20000,
  sign: 0x40000,
  x509sign: 0x80000,
} as const;

/** EVE's DefaultQuoteKeyTemplate: fixedTPM|fixedParent|sensitiveDataOrigin|userWithAuth|noDA|restricted|sign. */
export const EVE_QUOTE_KEY_ATTRIBUTES = 0x00050472;
/** TCG default EK (templates L-1/L-2): fixedTPM|fixedParent|sensitiveDataOrigin|adminWithPolicy|restricted|decrypt. */
export const TCG_EK_ATTRIBUTES = 0x000300b2;

/** PolicySecret(TPM_RH_ENDORSEMENT): the authPolicy of the TCG default EK templates. */
export const TCG_EK_AUTH_POLICY = Buffer.from('837197674484b3f81a90cc8d46a5d724fd52d76e06520b64f2a1da1b331469aa', 'hex');

/** PC-client PCR bank geometry. */
export const PCR_COUNT = 24;
export const PCR_SIZE_SHA256 = 32;
/** PC-client TPMs (and go-tpm) always write 3 select bytes. */
export const PCR_SELECT_SIZE = 3;

/** TPM2B_DATA holds at most sizeof(TPMT_HA) = 2 + 64 bytes (qualifyingData / extraData). */
export const MAX_TPM2B_DATA = 66;

/** swtpm's TPM_PT_FIRMWARE_VERSION_1/_2, used as the software TPM's firmwareVersion before obfuscation. */
export const SWTPM_FIRMWARE_VERSION = 0x2019102300163636n;

// Persistent handles EVE uses (lf-edge/eve pkg/pillar/evetpm), for documentation and metadata.
export const EVE_EK_HANDLE = 0x81000001;
export const EVE_QUOTE_KEY_HANDLE = 0x81000004;
