// One device's software TPM 2.0: a SHA-256 PCR bank filled by a measured boot, a quote key, a clock
// and reset counter, and TPM2_Quote producing the bytes a hardware TPM would (tpm-facts §5–§7).
//
// Kept small on purpose (tens of thousands per worker): the 24 PCRs are one 768-byte buffer, counters
// are numbers, and the event log is not stored — it is the build's shared log (measured-boot.ts), plus
// the rare events extended after boot. The quote key is the identity's KeyObject, used as is.

import { createHash, sign, type KeyObject } from 'node:crypto';
import { ecdsaDerToRs } from '../protocol/ecdsa-signature-forms.js';
import { serializeEventLog, type PcrEvent2 } from './event-log.js';
import { gzipEventLog } from './event-log-gzip.js';
import { measuredBoot, type BootBuild, type MeasuredBoot } from './measured-boot.js';
import { PCR_BANK_BYTES, extendPcr, pcrView, resetPcrBank } from './pcr-bank.js';
import { EVE_QUOTE_SELECTION, type PcrSelection } from './pcr-selection.js';
import { marshalQuoteAttest } from './tpms-attest.js';
import { marshalTpmtPublic, marshalTpm2bPublic } from './tpm-public.js';
import { objectName, primaryQualifiedName } from './tpm-name.js';
import { quoteKeyPublic } from './key-public-areas.js';
import { MAX_TPM2B_DATA, PCR_SIZE_SHA256, SWTPM_FIRMWARE_VERSION, TPM_ALG_SHA256, TPM_RH_OWNER } from './tpm-constants.js';

export interface SoftTpmOptions {
  /** The quote (attestation) key: a private P-256 KeyObject, created once per device. */
  quoteKey: KeyObject;
  /** What the device boots: its build (looked up in the shared cache) or a MeasuredBoot. */
  boot: BootBuild | MeasuredBoot;
  /** Simulation time (ms) of power-on. */
  powerOnAt: number;
  /** Resets before this power-on (a persisted counter); default 0. */
  resetCount?: number;
  /** TPM clock (ms) at power-on; default 0. */
  clock?: number;
  /**
   * qualifiedSigner to put in quotes. Default: the QN of a primary key in the owner hierarchy,
   * as EVE creates its quote key (000b || SHA-256(40000001 || Name)).
   */
  qualifiedSigner?: Uint8Array;
  /**
   * Add a per-key constant to resetCount, restartCount and firmwareVersion, as a TPM does for keys
   * outside the endorsement and platform hierarchies (EVE's owner-hierarchy quote key). Default true.
   */
  obfuscate?: boolean;
}

export interface TpmQuote {
  /** Raw TPMS_ATTEST (EVE's attestData, tpm2_quote -m). */
  attest: Uint8Array;
  /** ECDSA r||s, 64 bytes. */
  signatureRs: Uint8Array;
  /** ASN.1 DER SEQUENCE{r, s}: the signature EVE sends. */
  signatureDer: Uint8Array;
}

export interface TpmClockState {
  clock: number;
  /** As a verifier sees it in quotes (obfuscated when the key is). */
  resetCount: number;
  restartCount: number;
  /** The TPM's own counters. */
  resets: number;
  restarts: number;
}

const TWO32 = 0x1_0000_0000;

export class SoftTpm {
  private readonly pcrs: Uint8Array;
  private boot: MeasuredBoot;
  private readonly key: KeyObject;
  private readonly qualifiedSigner: Uint8Array;
  private clockAtPowerOn: number;
  private poweredAt: number;
  private resets: number;
  private restarts = 0;
  // Obfuscation constants (0 when off): added to resetCount, restartCount, firmwareVersion.
  private readonly obfReset: number;
  private readonly obfRestart: number;
  private readonly firmwareVersion: bigint;
  /** Events extended after boot with a log entry; undefined on almost every device. */
  private extraEvents: PcrEvent2[] | undefined;
  /** pcrDigest of EVE_QUOTE_SELECTION until the PCRs change; after boot, the build's shared one. */
  private eveDigest: Uint8Array | undefined;

  constructor(opts: SoftTpmOptions) {
    if (opts.quoteKey.type !== 'private') throw new TypeError('SoftTpm: quoteKey must be a private KeyObject');
    this.key = opts.quoteKey;
    this.boot = 'logBytes' in opts.boot ? opts.boot : measuredBoot(opts.boot);
    this.pcrs = new Uint8Array(PCR_BANK_BYTES);
    this.pcrs.set(this.boot.pcrs);
    this.eveDigest = this.boot.eveQuoteDigest;
    this.poweredAt = opts.powerOnAt;
    this.clockAtPowerOn = opts.clock ?? 0;
    this.resets = opts.resetCount ?? 0;
    if (!Number.isFinite(this.poweredAt)) throw new RangeError(`SoftTpm: powerOnAt must be a number of ms, got ${opts.powerOnAt}`);
    if (!Number.isSafeInteger(this.clockAtPowerOn) || this.clockAtPowerOn < 0) throw new RangeError(`SoftTpm: clock must be a non-negative integer of ms, got ${opts.clock}`);
    if (!Number.isInteger(this.resets) || this.resets < 0 || this.resets >= TWO32) throw new RangeError(`SoftTpm: resetCount must be a u32, got ${opts.resetCount}`);
    const qn = opts.qualifiedSigner ?? primaryQualifiedName(TPM_RH_OWNER, objectName(marshalTpmtPublic(quoteKeyPublic(this.key))));
    this.qualifiedSigner = new Uint8Array(qn);
    if (opts.obfuscate ?? true) {
      const o = createHash('sha256').update('evesim OBFUSCATE\0').update(qn).digest();
      this.firmwareVersion = (SWTPM_FIRMWARE_VERSION + o.readBigUInt64BE(0)) & 0xffff_ffff_ffff_ffffn;
      this.obfReset = o.readUInt32BE(8);
      this.obfRestart = o.readUInt32BE(12);
    } else {
      this.firmwareVersion = SWTPM_FIRMWARE_VERSION;
      this.obfReset = 0;
      this.obfRestart = 0;
    }
  }

  /** The build this TPM measured at its last boot. */
  get measuredBoot(): MeasuredBoot {
    return this.boot;
  }

  /** TPM2B_PUBLIC of the quote key (EVE's attributes 0x00050472); computed on each call. */
  quoteKeyPublicArea(): Uint8Array {
    return marshalTpm2bPublic(quoteKeyPublic(this.key));
  }

  qualifiedSignerName(): Uint8Array {
    return new Uint8Array(this.qualifiedSigner);
  }

  /** A copy of PCR `index` (SHA-256 bank). */
  readPcr(index: number): Uint8Array {
    return new Uint8Array(pcrView(this.pcrs, index));
  }

  /** All 24 PCR values, copied (what EVE sends as pcr_values). */
  readAllPcrs(): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let i = 0; i < 24; i++) out.push(this.pcrs.slice(i * PCR_SIZE_SHA256, (i + 1) * PCR_SIZE_SHA256));
    return out;
  }

  /**
   * TPM2_PCR_Extend on the SHA-256 bank. With `logAs`, the event also goes into this TPM's event log
   * (the measured-boot log plus these events), so the log keeps replaying to the PCRs.
   */
  extend(index: number, digest: Uint8Array, logAs?: { eventType: number; data: Uint8Array }): void {
    extendPcr(this.pcrs, index, digest);
    this.eveDigest = undefined;
    if (logAs) {
      (this.extraEvents ??= []).push({
        pcrIndex: index,
        eventType: logAs.eventType,
        digests: [{ hashAlg: TPM_ALG_SHA256, digest: new Uint8Array(digest) }],
        data: new Uint8Array(logAs.data),
      });
    }
  }

  /** The binary event log (shared bytes unless events were logged after boot). */
  eventLog(): Uint8Array {
    if (!this.extraEvents) return this.boot.logBytes;
    return serializeEventLog({ specId: this.boot.log.specId, events: [...this.boot.log.events, ...this.extraEvents] });
  }

  /** gzip of eventLog(), as EVE sends it in tpm_binary_event_log. */
  eventLogGzip(): Uint8Array {
    return this.extraEvents ? gzipEventLog(this.eventLog()) : this.boot.logGzip();
  }

  clockState(now: number): TpmClockState {
    return {
      clock: this.clockAt(now),
      resetCount: (this.resets + this.obfReset) >>> 0,
      restartCount: (this.restarts + this.obfRestart) >>> 0,
      resets: this.resets,
      restarts: this.restarts,
    };
  }

  private clockAt(now: number): number {
    return this.clockAtPowerOn + Math.max(0, Math.floor(now - this.poweredAt));
  }

  /**
   * A device reboot: TPM Reset (resetCount + 1, restartCount 0), PCRs back to their start values and
   * the measured boot of `build` (default: the same build) replayed. The clock keeps its value.
   */
  reboot(now: number, build?: BootBuild | MeasuredBoot): void {
    this.clockAtPowerOn = this.clockAt(now);
    this.poweredAt = now;
    this.resets = (this.resets + 1) % TWO32;
    this.restarts = 0;
    if (build) this.boot = 'logBytes' in build ? build : measuredBoot(build);
    this.pcrs.set(this.boot.pcrs);
    this.extraEvents = undefined;
    this.eveDigest = this.boot.eveQuoteDigest;
  }

  /**
   * A TPM reset under a running system (TPM2_Startup(CLEAR) without the boot that would measure
   * into it): PCRs back to their power-on values (0, DRTM PCRs all 0xFF), reset and restart counts
   * back to 0, the event log no longer replays to the PCRs. The clock keeps its value.
   */
  clear(now: number): void {
    this.clockAtPowerOn = this.clockAt(now);
    this.poweredAt = now;
    this.resets = 0;
    this.restarts = 0;
    resetPcrBank(this.pcrs);
    this.extraEvents = undefined;
    this.eveDigest = undefined;
  }

  /** SHA-256 over the selected PCR values in selection order; contiguous PCRs hashed in one update. */
  private digestOf(selection: readonly PcrSelection[]): Uint8Array {
    const h = createHash('sha256');
    for (const s of selection) {
      if (s.hash !== TPM_ALG_SHA256) throw new RangeError(`TPM2_Quote: only the SHA-256 bank is implemented, selection asks for 0x${s.hash.toString(16)}`);
      const pcrs = s.pcrs;
      for (let i = 0; i < pcrs.length; ) {
        let j = i;
        while (j + 1 < pcrs.length && pcrs[j + 1] === pcrs[j]! + 1) j++;
        if (pcrs[j]! >= 24) throw new RangeError(`TPM2_Quote: PCR ${pcrs[j]} is not implemented (0..23)`);
        h.update(this.pcrs.subarray(pcrs[i]! * PCR_SIZE_SHA256, (pcrs[j]! + 1) * PCR_SIZE_SHA256));
        i = j + 1;
      }
    }
    return new Uint8Array(h.digest());
  }

  /**
   * TPM2_Quote with the key's ECDSA-SHA256 scheme over `selection` (default SHA-256 PCR 0–15, as EVE
   * asks), qualifyingData = `nonce`, at simulation time `now`.
   */
  quote(nonce: Uint8Array, now: number, selection: readonly PcrSelection[] = [EVE_QUOTE_SELECTION]): TpmQuote {
    if (nonce.length > MAX_TPM2B_DATA) {
      throw new RangeError(`TPM2_Quote: qualifyingData of ${nonce.length} bytes exceeds TPM2B_DATA's ${MAX_TPM2B_DATA}`);
    }
    let pcrDigest: Uint8Array;
    if (selection.length === 1 && selection[0] === EVE_QUOTE_SELECTION) {
      // EVE's selection on every quote: the digest only changes when the PCRs do.
      pcrDigest = this.eveDigest ??= this.digestOf(selection);
    } else {
      pcrDigest = this.digestOf(selection);
    }
    const attest = marshalQuoteAttest({
      qualifiedSigner: this.qualifiedSigner,
      extraData: nonce,
      clockInfo: {
        clock: this.clockAt(now),
        resetCount: (this.resets + this.obfReset) >>> 0,
        restartCount: (this.restarts + this.obfRestart) >>> 0,
        safe: true,
      },
      firmwareVersion: this.firmwareVersion,
      pcrSelect: selection as PcrSelection[],
      pcrDigest,
    });
    // DER, not 'ieee-p1363': see ecdsaDerToRs (OpenSSL would keep a second copy of the key).
    const der = sign('sha256', attest, this.key);
    const signatureDer = new Uint8Array(der.buffer, der.byteOffset, der.length);
    return { attest, signatureRs: ecdsaDerToRs(signatureDer, 32), signatureDer };
  }
}
