// Attestation outcomes of a run, as the embedded controller counts them (GET /admin/stats →
// `attestation`, see servers/controller/attest-outcomes.ts): polled every few seconds and once at
// the end, exported to Prometheus, put in the run summary and judged by thresholds:
//   attestation.<CODE>          quote answers with that code: SUCCESS, NONCE_MISMATCH, NO_CERT_FOUND,
//                               QUOTE_FAILED, INVALID; TPM_DISABLED (the SUCCESS answers to empty
//                               quotes); KEYS_ESCROWED / ITOKEN_MISMATCH (STORE_KEYS answers)
//   attestation_devices.<CODE>  devices whose last quote got that code (same names; TPM_DISABLED the
//                               SUCCESS ones without a TPM), and TPM_RESET: devices whose TPM reset
//                               count changed between two verified quotes (rebooted, attested again)
// A real controller has no such API: these thresholds are then "not checked" (thresholds.ts).

import { Counter, Gauge, type Registry } from 'prom-client';
import type { TpmProvisionStats } from '../../fleet/tpm-provisioning.js';
import type { ThresholdMeasure } from '../threshold-measure.js';

/** What the run summary carries under `attestation` (the controller's figures at the end). */
export interface AttestationSummary {
  /** Quote answers by response code name (SUCCESS includes the empty "TPM disabled" quotes). */
  byCode: Record<string, number>;
  /** SUCCESS answers to quotes without PCR values (devices without a TPM). */
  tpmDisabled: number;
  /** STORE_KEYS answers: SUCCESS, ITOKEN_MISMATCH. */
  storeKeys: Record<string, number>;
  /** Refused quotes by reason ('template-mismatch', 'bad-signature', 'no-nonce', ...; quote-verifier.ts names them). */
  failureReasons: Record<string, number>;
  /** Nonces handed out. */
  nonces: number;
  devices: {
    /** Devices by the answer to their last quote (devices that never sent a quote are not counted). */
    byLastCode: Record<string, number>;
    /** Of those whose last answer was SUCCESS, the ones whose quote carried no PCR values. */
    tpmDisabled: number;
    /** Devices whose TPM reset count changed between two verified quotes (they rebooted and re-attested). */
    tpmReset: number;
  };
}

/** Reads the controller's `attestation` stats; undefined when absent or not in the expected shape. */
export function attestationSummaryOf(stats: Record<string, unknown>): AttestationSummary | undefined {
  const a = stats.attestation as Partial<AttestationSummary> | undefined;
  if (!a || typeof a !== 'object' || !isCounts(a.byCode) || !a.devices || !isCounts(a.devices.byLastCode)) return undefined;
  return {
    byCode: a.byCode,
    tpmDisabled: num(a.tpmDisabled),
    storeKeys: isCounts(a.storeKeys) ? a.storeKeys : {},
    failureReasons: isCounts(a.failureReasons) ? a.failureReasons : {},
    nonces: num(a.nonces),
    devices: { byLastCode: a.devices.byLastCode, tpmDisabled: num(a.devices.tpmDisabled), tpmReset: num(a.devices.tpmReset) },
  };
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
function isCounts(v: unknown): v is Record<string, number> {
  return typeof v === 'object' && v !== null && Object.values(v).every((x) => typeof x === 'number');
}

/** A threshold on `attestation.*` or `attestation_devices.*`. `run` is the measured run (its
 *  attestation part, written out: the summary names this file's type, so this file cannot name it). */
export function measureAttestation(subject: string, stat: string, run: { attestation?: AttestationSummary }): ThresholdMeasure {
  const a = run.attestation;
  if (!a) return { notChecked: 'no attestation outcomes: they come from the embedded controller\'s admin API (a real controller has none)' };
  if (subject === 'attestation') {
    if (stat === 'TPM_DISABLED') return { value: a.tpmDisabled };
    if (stat === 'KEYS_ESCROWED') return { value: a.storeKeys.SUCCESS ?? 0 };
    if (stat === 'ITOKEN_MISMATCH') return { value: a.storeKeys.ITOKEN_MISMATCH ?? 0 };
    return { value: a.byCode[stat] ?? 0 };
  }
  if (stat === 'TPM_DISABLED') return { value: a.devices.tpmDisabled };
  if (stat === 'TPM_RESET') return { value: a.devices.tpmReset };
  return { value: a.devices.byLastCode[stat] ?? 0 };
}

/**
 * Polls the controller's stats during the run and keeps the last figures; with a registry, exports
 * them as evesim_controller_attest_* metrics (counters follow the controller's running totals).
 */
export class AttestationMonitor {
  private last: AttestationSummary | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private readonly onUpdate: ((a: AttestationSummary) => void)[] = [];

  constructor(
    private readonly fetchStats: () => Promise<Record<string, unknown>>,
    private readonly warn: (message: string) => void,
  ) {}

  get latest(): AttestationSummary | undefined {
    return this.last;
  }

  start(everyMs = 5_000): void {
    this.timer = setInterval(() => void this.poll(), everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One more poll (the end of the run): the figures the summary reports. */
  async final(): Promise<AttestationSummary | undefined> {
    this.stop();
    await this.polling;
    await this.poll();
    return this.last;
  }

  private poll(): Promise<void> {
    this.polling ??= this.fetchStats()
      .then((stats) => {
        const a = attestationSummaryOf(stats);
        if (!a) return;
        this.last = a;
        for (const f of this.onUpdate) f(a);
      })
      .catch((e: unknown) => this.warn(`attestation outcomes: controller stats unavailable (${(e as Error).message})`))
      .finally(() => (this.polling = undefined));
    return this.polling;
  }

  /** Registers the evesim_controller_attest_* metrics on `registry`. */
  register(registry: Registry): void {
    const outcomes = new Counter({
      name: 'evesim_controller_attest_outcomes_total',
      help: 'Quote answers of the embedded controller by response code (TPM_DISABLED: the SUCCESS answers to empty quotes)',
      labelNames: ['code'],
      registers: [registry],
    });
    const storeKeys = new Counter({
      name: 'evesim_controller_attest_store_keys_total',
      help: 'STORE_KEYS answers of the embedded controller by response code',
      labelNames: ['code'],
      registers: [registry],
    });
    const reasons = new Counter({
      name: 'evesim_controller_attest_failures_total',
      help: 'Quotes the embedded controller refused, by reason',
      labelNames: ['reason'],
      registers: [registry],
    });
    const devices = new Gauge({
      name: 'evesim_controller_attest_devices',
      help: 'Devices by the answer to their last quote (TPM_DISABLED: SUCCESS without a TPM; TPM_RESET: re-attested after a TPM reset)',
      labelNames: ['code'],
      registers: [registry],
    });
    // The controller reports running totals; a counter moves by what is new since the last poll.
    const seen = new Map<Counter<string>, Map<string, number>>();
    const follow = (c: Counter<string>, label: string, key: string, total: number) => {
      let m = seen.get(c);
      if (!m) seen.set(c, (m = new Map()));
      const inc = total - (m.get(key) ?? 0);
      if (inc > 0) {
        c.inc({ [label]: key }, inc);
        m.set(key, total);
      }
    };
    this.onUpdate.push((a) => {
      for (const [code, n] of Object.entries(a.byCode)) follow(outcomes, 'code', code, n);
      follow(outcomes, 'code', 'TPM_DISABLED', a.tpmDisabled);
      for (const [code, n] of Object.entries(a.storeKeys)) follow(storeKeys, 'code', code, n);
      for (const [reason, n] of Object.entries(a.failureReasons)) follow(reasons, 'reason', reason, n);
      devices.reset();
      for (const [code, n] of Object.entries(a.devices.byLastCode)) devices.set({ code }, n);
      devices.set({ code: 'TPM_DISABLED' }, a.devices.tpmDisabled);
      devices.set({ code: 'TPM_RESET' }, a.devices.tpmReset);
    });
  }
}

/** One line on the TPM material the workers prepared (the first run's cost), or undefined. */
export function describeTpmPreparation(stats: readonly TpmProvisionStats[]): string | undefined {
  if (stats.length === 0) return undefined;
  const sum = (f: (s: TpmProvisionStats) => number) => stats.reduce((a, s) => a + f(s), 0);
  const created = sum((s) => s.ekCreated);
  const loaded = sum((s) => s.ekLoaded);
  const wall = Math.max(...stats.map((s) => s.wallMs));
  if (created === 0) return `TPM devices: ${loaded} endorsement keys and EK certificates loaded from the state directory in ${(wall / 1000).toFixed(1)} s`;
  const each = sum((s) => s.ekGenerateMs) / created;
  return (
    `TPM devices: generated ${created} RSA-2048 endorsement keys in ${(wall / 1000).toFixed(1)} s ` +
    `(${each.toFixed(0)} ms each on the thread pool; kept for the next run)${loaded > 0 ? `, loaded ${loaded}` : ''}`
  );
}

/** Report lines (text report): quote answers by code and devices by their last answer. */
export function attestationReportLines(a: AttestationSummary): string[] {
  const list = (m: Record<string, number>) =>
    Object.entries(m)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
  const quotes = list(a.byCode);
  if (!quotes) return [];
  const escrow = list(a.storeKeys);
  return [
    `attestation  quotes: ${quotes} (${a.tpmDisabled} SUCCESS without TPM)${escrow ? `; escrow: ${escrow}` : ''}`,
    `             devices by last answer: ${list(a.devices.byLastCode)} (${a.devices.tpmDisabled} without TPM); ${a.devices.tpmReset} re-attested after a TPM reset`,
    ...(Object.keys(a.failureReasons).length > 0 ? [`             refused: ${list(a.failureReasons)}`] : []),
  ];
}
