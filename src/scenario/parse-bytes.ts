// Memory sizes in thresholds: a number and a unit, `16KiB`, `2GiB`, `1.5 GB`. Binary units (KiB,
// MiB, GiB) and decimal ones (kB, KB, MB, GB) are both accepted and mean what they say; a bare
// number is refused, as bytes and KiB are easy to mix up and wrong by a factor of 1024.

const UNIT_BYTES: Record<string, number> = {
  B: 1,
  KiB: 2 ** 10,
  MiB: 2 ** 20,
  GiB: 2 ** 30,
  kB: 1e3,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
};

export const BYTES_HINT = 'a size such as 16KiB, 512MiB or 2GiB (also B, kB, MB, GB)';

/** Bytes of a size string, or an Error saying what is wrong with it. */
export function parseBytes(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([A-Za-z]+)$/.exec(text.trim());
  if (!m) {
    if (/^\d+(\.\d+)?$/.test(text.trim())) throw new Error(`"${text.trim()}" has no unit; expected ${BYTES_HINT}`);
    throw new Error(`"${text.trim()}" is not ${BYTES_HINT}`);
  }
  const unit = UNIT_BYTES[m[2]!];
  if (unit === undefined) throw new Error(`"${text.trim()}": unknown unit "${m[2]}"; expected ${BYTES_HINT}`);
  return Number(m[1]) * unit;
}
