// API v1 has no /uuid (docs/interfaces.md: "it receives it from the controller through
// its first config call"): a v1 device learns its UUID from EdgeDevConfig.id.uuid of its first
// configuration, fetched with the device certificate right after registration. That configuration
// is handed on (onConfigFromUuidLookup) and applied with its hash, so the config poll that starts
// once the device is onboarded carries the hash and gets a 304 when nothing changed.

import type { EndpointKey } from '../../protocol/endpoints.js';
import type { config } from '../../gen/eve-types.js';
import { Msg } from '../../protocol/messages.js';
import { v1Path } from '../../protocol/v1-endpoints.js';
import type { DeviceFinding, DeviceOptions } from '../device-options.js';
import type { DeviceSender } from '../sender/device-sender.js';
import type { Millis } from '../ports.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface V1UuidHost {
  readonly opts: DeviceOptions;
  readonly sender: DeviceSender;
  /** Bumped on reboot and stop: an answer to an older generation's request is ignored. */
  readonly generation: number;
  finding(endpoint: EndpointKey, kind: DeviceFinding['kind'], detail: string): void;
  /** The verified configuration that named the device (its hash is carried into the next poll). */
  onConfigFromUuidLookup(resp: config.ConfigResponse, now: Millis): void;
}

/** The device UUID from a first (hash-less) config request, or undefined (already counted and reported). */
export async function v1UuidFromConfig(host: V1UuidHost, dueAt: Millis): Promise<string | undefined> {
  const { sender, opts } = host;
  const gen = host.generation;
  const answer = await sender.post('config', v1Path('config'), Msg.ConfigRequest.encode({}), dueAt);
  if (answer === undefined || gen !== host.generation) return undefined;
  if (answer.status !== 200) {
    // 304 cannot be right: the request carried no hash. (A status the document does not list at
    // all is the sender's finding, undocumented-status.)
    if (answer.status === 304) {
      host.finding('config', 'conformance', 'first config request (for the UUID, without a configHash) answered 304 "unchanged"');
    }
    return undefined;
  }
  const payload = sender.open('config', answer, opts.clock.now());
  if (payload === undefined) return undefined;
  let resp: config.ConfigResponse;
  try {
    resp = Msg.ConfigResponse.decode(payload);
  } catch (e) {
    sender.reject('config', 'undecodable-body', `first configuration: ${(e as Error).message}`);
    return undefined;
  }
  const uuid = (resp.config?.id?.uuid ?? '').trim();
  if (!UUID_RE.test(uuid)) {
    sender.reject('config', 'conformance', `first configuration carries no device UUID in id.uuid (got ${JSON.stringify(uuid)})`);
    return undefined;
  }
  host.onConfigFromUuidLookup(resp, opts.clock.now());
  return uuid.toLowerCase();
}
