// Hardware and soft serial numbers derived from the scenario seed and the device index, so the same
// seed always names the same fleet (keys may differ; serials and indices never do).

import { createHmac } from 'node:crypto';

// Crockford base32 without I, L, O, U: reads like a label printed on hardware.
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function derive(seed: string | number, purpose: string, index: number): Buffer {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`device index must be a non-negative integer, got ${index}`);
  return createHmac('sha256', String(seed)).update(`${purpose}|${index}`).digest();
}

/**
 * Product serial for device `index`: "SIM" and 12 base32 characters (60 bits of
 * HMAC-SHA256(seed, "serial|index")). Collision odds are about 4e-7 for a million devices.
 */
export function hardwareSerial(seed: string | number, index: number): string {
  const mac = derive(seed, 'serial', index);
  let bits = mac.readBigUInt64BE(0) >> 4n; // top 60 bits
  let out = '';
  for (let i = 0; i < 12; i++) {
    out = CROCKFORD[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return `SIM${out}`;
}

/**
 * Soft serial for device `index`: a version-4-shaped UUID from HMAC-SHA256(seed, "soft-serial|index"),
 * which matches the register.proto rule ^[a-zA-Z0-9_-]*$ as EVE's generated soft serials do.
 */
export function softSerial(seed: string | number, index: number): string {
  const b = derive(seed, 'soft-serial', index).subarray(0, 16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
