// EVE refuses a non-empty answer that is to carry a protobuf message unless its Content-Type is
// application/x-proto-binary (zedcloud ValidateProtoContentType: "no content-type", "content-type
// <mime> not supported"), before it looks at the bytes. Parameters (charset, ...) are ignored.
// evesim refuses a wrong or unparsable Content-Type as EVE does, but reads a body that has none
// (EVE refuses that too): many test controllers leave it out, and a missing header is a lesser
// fault than an HTML error page served as the answer.

export const PROTO_MIME = 'application/x-proto-binary';

/**
 * EVE's onboarding client (/uuid, and /certs while onboarding) also takes these (eve-wire-facts
 * §4.3, §10); evesim applies them to /certs always (zedagent's later fetches want the proto type only).
 */
export const ONBOARDING_MIMES: readonly string[] = [PROTO_MIME, 'application/json', 'text/plain'];

/** What is wrong with the answer's Content-Type, or undefined when EVE would read its body. */
export function protoContentTypeProblem(
  headers: Record<string, string | string[] | undefined>,
  body: Uint8Array,
  accepted: readonly string[] = [PROTO_MIME],
): string | undefined {
  if (body.length === 0) return undefined;
  const raw = headers['content-type'];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined) return undefined; // see above: EVE would refuse it
  if (value.trim() === '') return 'empty content-type';
  const mime = value.split(';')[0]!.trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(mime)) return `content-type ${JSON.stringify(value)} does not parse`;
  return accepted.includes(mime) ? undefined : `content-type ${mime} not supported`;
}
