// PEM text <-> DER bytes, the way Go's encoding/pem writes it (64-column base64, trailing newline).

export class PemError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PemError';
  }
}

export interface PemBlock {
  type: string;
  der: Uint8Array;
  /** The block's text from BEGIN to END line inclusive, without surrounding whitespace. */
  text: string;
}

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/g;

/** All PEM blocks in a text, in order. Text between blocks is ignored as Go's pem.Decode does. */
export function pemBlocks(pem: string | Uint8Array): PemBlock[] {
  const text = typeof pem === 'string' ? pem : Buffer.from(pem).toString('latin1');
  const out: PemBlock[] = [];
  for (const m of text.matchAll(BLOCK)) {
    const body = m[2]!.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) throw new PemError(`PEM block ${m[1]} holds invalid base64`);
    out.push({ type: m[1]!, der: new Uint8Array(Buffer.from(body, 'base64')), text: m[0] });
  }
  return out;
}

/** DER of the first CERTIFICATE block; throws PemError naming `what` when there is none. */
export function certificateDer(pem: string | Uint8Array, what = 'certificate'): Uint8Array {
  const block = pemBlocks(pem).find((b) => b.type === 'CERTIFICATE');
  if (!block) throw new PemError(`${what}: no CERTIFICATE PEM block`);
  return block.der;
}

/**
 * The bytes of base64(PEM file text): how EVE carries a certificate file inside a protobuf field
 * (AuthContainer.senderCert of register, ZRegisterMsg.pemCert).
 */
export function pemBase64Bytes(pem: string): Uint8Array {
  return new Uint8Array(Buffer.from(Buffer.from(pem, 'utf8').toString('base64'), 'latin1'));
}

/** PEM file text for DER bytes: 64-column base64 lines and a final newline, like files EVE writes. */
export function derToPem(der: Uint8Array, type = 'CERTIFICATE'): string {
  const b64 = Buffer.from(der).toString('base64');
  // Joined, not concatenated: a string built with += is a tree of slices that costs twice its text
  // for as long as it is kept (certificates are kept per device for the whole run).
  const lines = [`-----BEGIN ${type}-----`];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  lines.push(`-----END ${type}-----`, '');
  return lines.join('\n');
}
