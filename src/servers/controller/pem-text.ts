// Certificates on the register path arrive as base64 of the PEM file (what EVE sends in pemCert and
// senderCert, eve-wire-facts §2.2) or, as the proto comment reads, as PEM itself. Both are taken.

export class PemTextError extends Error {
  override readonly name = 'PemTextError';
}

/** PEM text from base64-of-PEM bytes or from PEM bytes; `what` names the field in errors. */
export function pemText(bytes: Uint8Array, what: string): string {
  const s = Buffer.from(bytes).toString('latin1');
  if (s.trimStart().startsWith('-----BEGIN')) return s;
  if (!/^[A-Za-z0-9+/=\s]*$/.test(s)) throw new PemTextError(`${what} is neither PEM nor base64 of PEM`);
  const decoded = Buffer.from(s, 'base64').toString('latin1');
  if (!decoded.includes('-----BEGIN')) throw new PemTextError(`${what}: base64 does not decode to PEM`);
  return decoded;
}
