// The TCG crypto-agile event log (PFP "TCG_PCR_EVENT", "TCG_PCR_EVENT2", "Specification ID Version
// Event"; tpm-facts §9), all little-endian: one SHA-1-format TCG_PCR_EVENT holding the Spec ID event,
// then TCG_PCR_EVENT2 records with one digest per bank listed in the Spec ID event, in that order.
// This is the file Linux shows as binary_bios_measurements and EVE gzips into tpm_binary_event_log.

import { ByteReader } from './byte-reader.js';
import { ByteWriter } from './byte-writer.js';
import { EV } from './event-types.js';
import { DIGEST_SIZE, TPM_ALG_SHA256 } from './tpm-constants.js';

export interface SpecIdAlgorithm {
  algId: number;
  digestSize: number;
}

export interface SpecIdEvent {
  /** 0 client, 1 server. */
  platformClass: number;
  specVersionMinor: number;
  specVersionMajor: number;
  specErrata: number;
  /** 1 = UINT32, 2 = UINT64. */
  uintnSize: number;
  algorithms: SpecIdAlgorithm[];
  vendorInfo: Uint8Array;
}

export interface EventDigest {
  hashAlg: number;
  digest: Uint8Array;
}

export interface PcrEvent2 {
  pcrIndex: number;
  eventType: number;
  digests: EventDigest[];
  data: Uint8Array;
}

export interface TcgEventLog {
  specId: SpecIdEvent;
  events: PcrEvent2[];
}

const SPEC_ID_SIGNATURE = Buffer.from('Spec ID Event03\0', 'latin1');

/** The Spec ID event of a SHA-256-only PC-client log, as EDK2 writes it (errata 0, UINT64). */
export function sha256SpecId(): SpecIdEvent {
  return {
    platformClass: 0,
    specVersionMinor: 0,
    specVersionMajor: 2,
    specErrata: 0,
    uintnSize: 2,
    algorithms: [{ algId: TPM_ALG_SHA256, digestSize: 32 }],
    vendorInfo: new Uint8Array(0),
  };
}

function specIdBytes(s: SpecIdEvent): Uint8Array {
  const w = new ByteWriter(64);
  w.bytes(SPEC_ID_SIGNATURE).u32le(s.platformClass).u8(s.specVersionMinor).u8(s.specVersionMajor).u8(s.specErrata).u8(s.uintnSize);
  w.u32le(s.algorithms.length);
  for (const a of s.algorithms) w.u16le(a.algId).u16le(a.digestSize);
  if (s.vendorInfo.length > 255) throw new RangeError(`Spec ID vendorInfo of ${s.vendorInfo.length} bytes exceeds 255`);
  w.u8(s.vendorInfo.length).bytes(s.vendorInfo);
  return w.finish();
}

/** Writes one TCG_PCR_EVENT2 record; digests must follow the Spec ID event's algorithm list. */
export function writePcrEvent2(w: ByteWriter, specId: SpecIdEvent, e: PcrEvent2, index: number): void {
  if (e.digests.length !== specId.algorithms.length) {
    throw new RangeError(`event ${index} (PCR ${e.pcrIndex}): ${e.digests.length} digests, the Spec ID event lists ${specId.algorithms.length} banks`);
  }
  w.u32le(e.pcrIndex).u32le(e.eventType).u32le(e.digests.length);
  e.digests.forEach((d, i) => {
    const alg = specId.algorithms[i]!;
    if (d.hashAlg !== alg.algId || d.digest.length !== alg.digestSize) {
      throw new RangeError(`event ${index} (PCR ${e.pcrIndex}) digest ${i}: expected alg 0x${alg.algId.toString(16)} with ${alg.digestSize} bytes`);
    }
    w.u16le(d.hashAlg).bytes(d.digest);
  });
  w.u32le(e.data.length).bytes(e.data);
}

export function serializeEventLog(log: TcgEventLog): Uint8Array {
  const w = new ByteWriter(4096);
  const spec = specIdBytes(log.specId);
  // TCG_PCR_EVENT (SHA-1 format): PCR 0, EV_NO_ACTION, 20 zero bytes, size, Spec ID event.
  w.u32le(0).u32le(EV.NO_ACTION).zeros(20).u32le(spec.length).bytes(spec);
  log.events.forEach((e, i) => writePcrEvent2(w, log.specId, e, i + 1));
  return w.finish();
}

function readSpecId(bytes: Uint8Array, where: string): SpecIdEvent {
  const r: ByteReader = new ByteReader(bytes, `${where} Spec ID event`);
  const sig = r.bytesView(16, 'signature');
  if (!Buffer.from(sig).equals(SPEC_ID_SIGNATURE)) r.fail('signature', `is not "Spec ID Event03\\0": ${JSON.stringify(Buffer.from(sig).toString('latin1'))}`, 0);
  const platformClass = r.u32le('platformClass');
  const specVersionMinor = r.u8('specVersionMinor');
  const specVersionMajor = r.u8('specVersionMajor');
  const specErrata = r.u8('specErrata');
  const uintnSize = r.u8('uintnSize');
  const n = r.u32le('numberOfAlgorithms');
  if (n === 0 || n > 16) r.fail('numberOfAlgorithms', `${n} is not between 1 and 16`, r.offset - 4);
  const algorithms: SpecIdAlgorithm[] = [];
  for (let i = 0; i < n; i++) {
    const at = r.offset;
    const algId = r.u16le(`digestSizes[${i}].algorithmId`);
    const digestSize = r.u16le(`digestSizes[${i}].digestSize`);
    const known = DIGEST_SIZE[algId];
    if (known !== undefined && known !== digestSize) r.fail(`digestSizes[${i}]`, `alg 0x${algId.toString(16)} has ${known}-byte digests, not ${digestSize}`, at);
    if (digestSize === 0 || digestSize > 64) r.fail(`digestSizes[${i}].digestSize`, `${digestSize} is not a digest size`, at + 2);
    algorithms.push({ algId, digestSize });
  }
  const vendorInfo = r.bytesCopy(r.u8('vendorInfoSize'), 'vendorInfo');
  r.end();
  return { platformClass, specVersionMinor, specVersionMajor, specErrata, uintnSize, algorithms, vendorInfo };
}

/** Parses a crypto-agile log; errors name the record number, field and byte offset. */
export function parseEventLog(bytes: Uint8Array, where = 'event log'): TcgEventLog {
  const r: ByteReader = new ByteReader(bytes, where);
  const pcr0 = r.u32le('record 0 PCRIndex');
  const type0 = r.u32le('record 0 EventType');
  if (pcr0 !== 0 || type0 !== EV.NO_ACTION) {
    r.fail('record 0', `expected the Spec ID event (PCR 0, EV_NO_ACTION); got PCR ${pcr0}, type 0x${type0.toString(16)} — not a crypto-agile log`, 0);
  }
  r.bytesView(20, 'record 0 digest');
  const specSize = r.u32le('record 0 EventSize');
  const specId = readSpecId(r.bytesView(specSize, 'record 0 event'), where);
  const events: PcrEvent2[] = [];
  for (let index = 1; r.remaining > 0; index++) {
    const rec = `record ${index}`;
    const pcrIndex = r.u32le(`${rec} PCRIndex`);
    const eventType = r.u32le(`${rec} EventType`);
    const countAt = r.offset;
    const count = r.u32le(`${rec} digests.count`);
    if (count !== specId.algorithms.length) {
      r.fail(`${rec} digests.count`, `${count} digests, the Spec ID event lists ${specId.algorithms.length} banks`, countAt);
    }
    const digests: EventDigest[] = [];
    for (let i = 0; i < count; i++) {
      const algAt = r.offset;
      const hashAlg = r.u16le(`${rec} digests[${i}].hashAlg`);
      const alg = specId.algorithms.find((a) => a.algId === hashAlg);
      if (!alg) r.fail(`${rec} digests[${i}].hashAlg`, `0x${hashAlg.toString(16)} is not listed in the Spec ID event`, algAt);
      digests.push({ hashAlg, digest: r.bytesCopy(alg.digestSize, `${rec} digests[${i}].digest`) });
    }
    const size = r.u32le(`${rec} EventSize`);
    events.push({ pcrIndex, eventType, digests, data: r.bytesCopy(size, `${rec} Event`) });
  }
  return { specId, events };
}
