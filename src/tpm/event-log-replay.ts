// Replays an event log into a PCR bank: for every event except EV_NO_ACTION, PCR = H(PCR || digest).
// A StartupLocality EV_NO_ACTION event (data "StartupLocality\0" + u8 locality) sets PCR 0's start value.

import { createHash } from 'node:crypto';
import { EV } from './event-types.js';
import type { TcgEventLog } from './event-log.js';
import { DIGEST_SIZE, HASH_NAME, PCR_COUNT, TPM_ALG_SHA256 } from './tpm-constants.js';

const STARTUP_LOCALITY = Buffer.from('StartupLocality\0', 'latin1');

export interface ReplayResult {
  hashAlg: number;
  /** PCR_COUNT × digest size bytes, PC-client start values (17–22 all 0xFF) for unlogged PCRs. */
  bank: Uint8Array;
  /** PCR indices that at least one event extended. */
  extended: Set<number>;
}

/** Replays the `hashAlg` digests of `log`; events for PCRs ≥ 24 are an error naming the record. */
export function replayEventLog(log: TcgEventLog, hashAlg = TPM_ALG_SHA256): ReplayResult {
  const size = DIGEST_SIZE[hashAlg];
  const name = HASH_NAME[hashAlg];
  if (!size || !name) throw new RangeError(`replay: unsupported hash 0x${hashAlg.toString(16)}`);
  if (!log.specId.algorithms.some((a) => a.algId === hashAlg)) {
    throw new RangeError(`replay: the log has no 0x${hashAlg.toString(16)} bank (Spec ID lists ${log.specId.algorithms.map((a) => '0x' + a.algId.toString(16)).join(', ')})`);
  }
  const bank = new Uint8Array(PCR_COUNT * size);
  bank.fill(0xff, 17 * size, 23 * size);
  const extended = new Set<number>();
  log.events.forEach((e, i) => {
    const rec = `event log record ${i + 1}`;
    if (e.eventType === EV.NO_ACTION) {
      if (e.data.length === 17 && Buffer.from(e.data.subarray(0, 16)).equals(STARTUP_LOCALITY) && !extended.has(0)) {
        bank.fill(0, 0, size);
        bank[size - 1] = e.data[16]!;
      }
      return;
    }
    if (e.pcrIndex >= PCR_COUNT) throw new RangeError(`${rec}: PCR index ${e.pcrIndex} is outside 0..${PCR_COUNT - 1}`);
    const d = e.digests.find((x) => x.hashAlg === hashAlg);
    if (!d) throw new RangeError(`${rec} (PCR ${e.pcrIndex}): no digest for bank 0x${hashAlg.toString(16)}`);
    const at = e.pcrIndex * size;
    bank.set(createHash(name).update(bank.subarray(at, at + size)).update(d.digest).digest(), at);
    extended.add(e.pcrIndex);
  });
  return { hashAlg, bank, extended };
}
