// Attestation outcomes over the whole controller, for GET /admin/stats (and from there the runner's
// summary, thresholds and Prometheus metrics): quote answers by response code, the "TPM disabled"
// share of the SUCCESS answers, STORE_KEYS answers, refusal reasons, and — counted from the device
// records when asked — devices by the answer to their last quote.

import { attest } from '../../gen/eve-types.js';
import type { DeviceRecord } from './device-record.js';
import type { AttestationSummary } from '../../runner/attestation/attestation-outcomes.js';

/** ZAttestResponseCode numbers → the names used in stats, summary and thresholds. */
export const QUOTE_CODE_NAMES: Readonly<Record<number, string>> = {
  [attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_INVALID]: 'INVALID',
  [attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS]: 'SUCCESS',
  [attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_NONCE_MISMATCH]: 'NONCE_MISMATCH',
  [attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_NO_CERT_FOUND]: 'NO_CERT_FOUND',
  [attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_QUOTE_FAILED]: 'QUOTE_FAILED',
};

export const quoteCodeName = (code: number): string => QUOTE_CODE_NAMES[code] ?? `CODE_${code}`;

/** The JSON GET /admin/stats carries under `attestation`: the shape the runner's summary reads. */
export type AttestOutcomesJson = AttestationSummary;

const inc = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
const sorted = (m: Map<string, number>) => Object.fromEntries([...m].sort((a, b) => a[0].localeCompare(b[0])));

export class AttestOutcomes {
  private readonly byCode = new Map<string, number>();
  private readonly storeKeys = new Map<string, number>();
  private readonly reasons = new Map<string, number>();
  private tpmDisabled = 0;
  private nonces = 0;

  nonceIssued(): void {
    this.nonces++;
  }

  quoteAnswered(code: number, reasonKey: string, empty: boolean): void {
    inc(this.byCode, quoteCodeName(code));
    if (code === attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS) {
      if (empty) this.tpmDisabled++;
    } else {
      inc(this.reasons, reasonKey);
    }
  }

  storeKeysAnswered(ok: boolean): void {
    inc(this.storeKeys, ok ? 'SUCCESS' : 'ITOKEN_MISMATCH');
  }

  toJSON(devices: Iterable<DeviceRecord>): AttestOutcomesJson {
    const byLast = new Map<string, number>();
    let disabled = 0;
    let reset = 0;
    for (const d of devices) {
      const a = d.attest;
      if (!a || a.quotes === 0) continue;
      inc(byLast, quoteCodeName(a.lastQuoteResult));
      if (a.lastQuoteResult === attest.ZAttestResponseCode.Z_ATTEST_RESPONSE_CODE_SUCCESS && a.lastQuoteEmpty) disabled++;
      if (a.tpmResets > 0) reset++;
    }
    return {
      byCode: sorted(this.byCode),
      tpmDisabled: this.tpmDisabled,
      storeKeys: sorted(this.storeKeys),
      failureReasons: sorted(this.reasons),
      nonces: this.nonces,
      devices: { byLastCode: sorted(byLast), tpmDisabled: disabled, tpmReset: reset },
    };
  }
}
