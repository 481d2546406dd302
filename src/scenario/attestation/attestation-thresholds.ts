// Threshold subjects on attestation outcomes (measured in src/runner/attestation/attestation-outcomes.ts):
//   attestation.<CODE> == n          quote answers: SUCCESS, NONCE_MISMATCH, NO_CERT_FOUND, QUOTE_FAILED,
//                                    INVALID; TPM_DISABLED (SUCCESS to empty quotes); KEYS_ESCROWED and
//                                    ITOKEN_MISMATCH (STORE_KEYS answers)
//   attestation_devices.<CODE> == n  devices whose last quote got that answer (TPM_DISABLED: SUCCESS
//                                    without a TPM), and TPM_RESET (re-attested after a TPM reset)

export const QUOTE_CODES = ['SUCCESS', 'NONCE_MISMATCH', 'NO_CERT_FOUND', 'QUOTE_FAILED', 'INVALID'] as const;
export const ATTESTATION_STATS = [...QUOTE_CODES, 'TPM_DISABLED', 'KEYS_ESCROWED', 'ITOKEN_MISMATCH'] as const;
export const ATTESTATION_DEVICE_STATS = [...QUOTE_CODES, 'TPM_DISABLED', 'TPM_RESET'] as const;

export const ATTESTATION_THRESHOLD_SUBJECTS: Record<string, Record<string, 'count'>> = {
  attestation: Object.fromEntries(ATTESTATION_STATS.map((s) => [s, 'count'])),
  attestation_devices: Object.fromEntries(ATTESTATION_DEVICE_STATS.map((s) => [s, 'count'])),
};
