// Turns a recorded body back into something a person can read, for `evesim decode` and for
// inspecting a fleet bug after the fact. Enveloped bodies are opened as AuthContainer, then the
// payload is decoded as the endpoint's message (eve-wire-facts §0, §1, §8.2, §13.3); newlogs
// payloads are gunzipped into their LogEntry lines. Never throws: traffic from a misbehaving
// controller is exactly what one wants to look at, so what does not decode is shown as text or
// base64 with the reason.

import type { Codec } from '../protocol/codec.js';
import type { EndpointKey } from '../protocol/endpoints.js';
import type { RequestEndpointKey } from '../device/ports.js';
import { isLpsEndpointKey, lpsCodecOf } from './lps-record-decode.js';
import { Msg } from '../protocol/messages.js';
import { readNewlogsFile } from '../protocol/newlogs.js';
import type { RecordedExchange } from './record-reader.js';

export type BodyDirection = 'request' | 'response';

export type DecodedBody =
  | { kind: 'empty' }
  /** An AuthContainer; `envelope` is its JSON without the payload bytes, `payload` the decoded message. */
  | { kind: 'envelope'; message: string; envelope: Record<string, unknown>; payloadBytes: number; payload: unknown }
  /** A newlogs AuthContainer: the gzip payload opened, one entry per line. */
  | { kind: 'newlogs'; envelope: Record<string, unknown>; payloadBytes: number; gzipHeader: Record<string, unknown>; meta?: unknown; entries: unknown[] }
  /** A message sent without an envelope (not what EVE or Adam do, but a controller might). */
  | { kind: 'message'; message: string; value: unknown }
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'undecodable'; reason: string; base64: string };

type Payload = { codec: () => Codec<unknown> } | 'newlogs-device' | 'newlogs-app' | undefined;

/** What each endpoint carries inside its envelope, per direction (undefined: nothing enveloped). */
function payloadOf(endpoint: EndpointKey, direction: BodyDirection): Payload {
  const m = (get: () => Codec<unknown>): Payload => ({ codec: get });
  if (direction === 'request') {
    switch (endpoint) {
      case 'register': return m(() => Msg.ZRegisterMsg as Codec<unknown>);
      case 'uuid': return m(() => Msg.UuidRequest as Codec<unknown>);
      case 'attest': return m(() => Msg.ZAttestReq as Codec<unknown>);
      case 'config': return m(() => Msg.ConfigRequest as Codec<unknown>);
      case 'info': return m(() => Msg.ZInfoMsg as Codec<unknown>);
      case 'metrics': return m(() => Msg.ZMetricMsg as Codec<unknown>);
      case 'logs': return m(() => Msg.LogBundle as Codec<unknown>);
      case 'applogs': return m(() => Msg.AppInstanceLogBundle as Codec<unknown>);
      case 'flowlog': return m(() => Msg.FlowMessage as Codec<unknown>);
      case 'newlogs': return 'newlogs-device';
      case 'appnewlogs': return 'newlogs-app';
      default: return undefined; // ping, certs: GET, no body
    }
  }
  switch (endpoint) {
    case 'certs': return m(() => Msg.ZControllerCert as Codec<unknown>);
    case 'uuid': return m(() => Msg.UuidResponse as Codec<unknown>);
    case 'attest': return m(() => Msg.ZAttestResponse as Codec<unknown>);
    case 'config': return m(() => Msg.ConfigResponse as Codec<unknown>);
    default: return undefined; // register, info, metrics, logs, flowlog: empty; newlogs: optional JSON
  }
}

/** Decodes one recorded body of `endpoint`. `status` (responses) steers error bodies to text. */
export function decodeRecordedBody(
  endpoint: RequestEndpointKey,
  direction: BodyDirection,
  body: Uint8Array,
  status?: number,
): DecodedBody {
  if (body.byteLength === 0) return { kind: 'empty' };
  const success = status === undefined || (status >= 200 && status < 300);
  // Error replies are Go http.Error plain text (§13.3).
  if (!success && isPrintable(body)) return asText(body);
  if (isLpsEndpointKey(endpoint)) {
    // Local profile server bodies are bare messages.
    const lps = lpsCodecOf(endpoint, direction);
    return lps === undefined ? asJsonOrText(body, `no message is expected in a ${endpoint} ${direction}`) : fallback(body, { codec: () => lps }, `not a ${lps.fullName}`);
  }
  const payload = payloadOf(endpoint, direction);
  if (payload === undefined) return asJsonOrText(body, `no message is expected in a ${endpoint} ${direction}`);

  let container: Record<string, unknown> & { protectedPayload?: { payload?: Uint8Array } };
  try {
    container = Msg.AuthContainer.decode(body) as typeof container;
  } catch (err) {
    return fallback(body, payload, `not an AuthContainer: ${(err as Error).message}`);
  }
  if (!container.protectedPayload) return fallback(body, payload, 'AuthContainer without protectedPayload');
  // A zero-length payload is legitimate (the empty UuidRequest).
  // (protobufjs leaves an absent bytes field as a shared empty array, not a Uint8Array.)
  const raw = container.protectedPayload.payload;
  const inner = raw instanceof Uint8Array ? raw : new Uint8Array(0);
  const envelope = Msg.AuthContainer.toJSON(container as never);
  const pp = envelope['protectedPayload'] as Record<string, unknown> | undefined;
  if (pp) delete pp['payload'];
  if (pp && Object.keys(pp).length === 0) delete envelope['protectedPayload'];

  if (payload === 'newlogs-device' || payload === 'newlogs-app') {
    try {
      const f = readNewlogsFile(inner, { kind: payload === 'newlogs-device' ? 'device' : 'app' });
      const out: DecodedBody = {
        kind: 'newlogs',
        envelope,
        payloadBytes: inner.byteLength,
        gzipHeader: { ...f.header, extra: f.header.extra ? Buffer.from(f.header.extra).toString('base64') : undefined },
        entries: f.entries ?? [],
      };
      if (f.meta) out.meta = f.meta;
      return out;
    } catch (err) {
      return { kind: 'undecodable', reason: `newlogs payload: ${(err as Error).message}`, base64: b64(inner) };
    }
  }
  const c = payload.codec();
  try {
    return { kind: 'envelope', message: c.fullName, envelope, payloadBytes: inner.byteLength, payload: c.toJSON(c.decode(inner)) };
  } catch (err) {
    return { kind: 'undecodable', reason: `payload is not ${c.fullName}: ${(err as Error).message}`, base64: b64(inner) };
  }
}

/** Both bodies of a recorded exchange, decoded. */
export function decodeExchange(x: RecordedExchange): { request: DecodedBody; response: DecodedBody } {
  return {
    request: decodeRecordedBody(x.endpoint, 'request', x.requestBody),
    response: decodeRecordedBody(x.endpoint, 'response', x.responseBody, x.status),
  };
}

/** The envelope did not parse: maybe the message was sent bare, maybe it is text. */
function fallback(body: Uint8Array, payload: Exclude<Payload, undefined>, reason: string): DecodedBody {
  if (typeof payload === 'object') {
    const c = payload.codec();
    try {
      return { kind: 'message', message: c.fullName, value: c.toJSON(c.decode(body)) };
    } catch {
      // fall through
    }
  }
  return isPrintable(body) ? asText(body) : { kind: 'undecodable', reason, base64: b64(body) };
}

function asJsonOrText(body: Uint8Array, reason: string): DecodedBody {
  if (!isPrintable(body)) return { kind: 'undecodable', reason, base64: b64(body) };
  const text = Buffer.from(body).toString('utf8');
  try {
    return { kind: 'json', value: JSON.parse(text) };
  } catch {
    return { kind: 'text', text };
  }
}

function asText(body: Uint8Array): DecodedBody {
  return { kind: 'text', text: Buffer.from(body).toString('utf8') };
}

/** Valid UTF-8 without control characters other than tab, CR, LF. */
function isPrintable(body: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text);
}

function b64(b: Uint8Array): string {
  return Buffer.from(b).toString('base64');
}
