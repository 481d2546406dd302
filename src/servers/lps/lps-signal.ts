// The LPS signal stream (eve-wire-facts §11.2, §15.1 #7): `GET /api/v1/signal` stays open and
// carries NDJSON lines, each a protobuf-JSON Signal naming the endpoints the device should call
// now, e.g. {"pendingChanges":["CONFIG_ENDPOINT_RADIO"]}. The admin API signals the devices a change
// concerns, so they pick it up without waiting for their next poll.

import type { ServerResponse } from 'node:http';
import { profile } from '../../gen/eve-types.js';
import { Msg } from '../../protocol/messages.js';
import type { LpsDevice } from './lps-site.js';

export const SignalEndpoint = profile.ConfigEndpoint;

export class LpsSignalHub {
  /** Open streams by device key. */
  private readonly streams = new Map<string, Set<ServerResponse>>();
  linesSent = 0;

  add(d: LpsDevice, res: ServerResponse): void {
    let set = this.streams.get(d.key);
    if (set === undefined) this.streams.set(d.key, (set = new Set()));
    set.add(res);
    res.on('close', () => {
      set!.delete(res);
      if (set!.size === 0 && this.streams.get(d.key) === set) this.streams.delete(d.key);
    });
  }

  get openStreams(): number {
    let n = 0;
    for (const s of this.streams.values()) n += s.size;
    return n;
  }

  /** Sends one Signal line to the given devices (every open stream for 'all'). */
  notify(devices: readonly LpsDevice[] | 'all', endpoints: readonly profile.ConfigEndpoint[]): void {
    if (this.streams.size === 0) return;
    const line = JSON.stringify(Msg.Signal.toJSON({ pending_changes: [...endpoints] }, { lowerCamelCase: true })) + '\n';
    const targets = devices === 'all' ? [...this.streams.values()] : devices.map((d) => this.streams.get(d.key)).filter((s) => s !== undefined);
    for (const set of targets) {
      for (const res of set!) {
        res.write(line);
        this.linesSent++;
      }
    }
  }

  closeAll(): void {
    for (const set of this.streams.values()) for (const res of set) res.end();
    this.streams.clear();
  }
}
