// The device side of an embedded LPS: one request in, one reply out (docs/interfaces.md
// "Endpoints"; eve-wire-facts §11). Every reply with a body carries the site's server_token.
//   GET  local_profile → 200 LocalProfile (the device's or the site's profile, '' resets)
//   POST radio         → 200 RadioConfig when a radio silence was set, else 204
//   POST appinfo       → 200 LocalAppCmdList when commands are issued, else 204; completion noted
//   POST devinfo       → 200 LocalDevCmd when a command is issued, else 204; binds the peer to the
//                        device_uuid; completion noted
//   POST location      → 200, no body
//   POST appbootinfo, network → 204 (kept as they are)
//   GET  signal        → long-lived NDJSON stream (the server keeps the socket; see lps-server.ts)
// An endpoint throttled by the admin answers 404. Bodies that do not decode answer 400, a POST
// without application/x-proto-binary 415, a wrong method 405: each with a text naming the problem.

import { Msg } from '../../protocol/messages.js';
import { LPS_ENDPOINT_METHOD, lpsEndpointOf, PROTO_MIME, type LpsServedEndpoint } from './lps-endpoints.js';
import { DEVICE_CMD_CODE, type LpsDevice, type LpsSite } from './lps-site.js';

export interface LpsReply {
  status: number;
  body?: Uint8Array;
  contentType?: string;
  /** Set for GET signal answered 200: the caller streams Signal lines to this device. */
  stream?: LpsDevice;
}

/** Answers per endpoint and status, site-wide. */
export type LpsStatusCounts = Record<string, Record<string, number>>;

export class LpsDeviceApi {
  readonly counts: LpsStatusCounts = {};
  /** Encoded replies that depend only on a value (the token is fixed): most devices get the same bytes. */
  private readonly radioReplies = new Map<boolean, Uint8Array>();
  private readonly profileReplies = new Map<string, Uint8Array>();

  constructor(
    private readonly site: LpsSite,
    private readonly now: () => number,
  ) {}

  handle(method: string, url: string, host: string, contentType: string | undefined, remoteAddress: string, body: Uint8Array): LpsReply {
    const ep = lpsEndpointOf(url);
    const reply = ep === undefined ? text(404, `no LPS endpoint ${url.split('?')[0]} (this server implements /api/v1/{local_profile,radio,appinfo,devinfo,location,appbootinfo,network,signal})`) : this.endpoint(ep, method, url, host, contentType, remoteAddress, body);
    const row = (this.counts[ep ?? 'unknown'] ??= {});
    row[reply.status] = (row[reply.status] ?? 0) + 1;
    return reply;
  }

  private endpoint(ep: LpsServedEndpoint, method: string, url: string, host: string, contentType: string | undefined, remote: string, body: Uint8Array): LpsReply {
    const want = LPS_ENDPOINT_METHOD[ep];
    if (method !== want) return text(405, `${method} ${url}: this endpoint takes ${want}`);
    if (want === 'POST' && (contentType === undefined || contentType.split(';')[0]!.trim().toLowerCase() !== PROTO_MIME)) {
      return text(415, `POST ${url}: Content-Type must be ${PROTO_MIME}, got ${contentType === undefined ? 'none' : JSON.stringify(contentType)}`);
    }
    const site = this.site;
    let d = site.resolve(host, remote);
    site.record(d, ep, want === 'POST' ? body : undefined, this.now());
    if (site.isThrottled(d, ep)) return { status: 404 };
    const token = site.token;
    try {
      switch (ep) {
        case 'local_profile': {
          const p = site.effectiveProfile(d);
          let bytes = this.profileReplies.get(p);
          if (bytes === undefined) {
            bytes = Msg.LocalProfile.encode({ local_profile: p, server_token: token });
            if (this.profileReplies.size > 1000) this.profileReplies.clear();
            this.profileReplies.set(p, bytes);
          }
          return proto(bytes);
        }
        case 'radio': {
          Msg.RadioStatus.decode(body);
          const silence = site.effectiveRadioSilence(d);
          if (silence === undefined) return { status: 204 };
          let bytes = this.radioReplies.get(silence);
          if (bytes === undefined) this.radioReplies.set(silence, (bytes = Msg.RadioConfig.encode({ server_token: token, radio_silence: silence })));
          return proto(bytes);
        }
        case 'appinfo': {
          const m = Msg.LocalAppInfoList.decode(body);
          site.noteAppInfo(d, m.apps_info ?? []);
          const cmds = site.servedAppCommands(d);
          if (cmds.length === 0) return { status: 204 };
          return proto(Msg.LocalAppCmdList.encode({ server_token: token, app_commands: cmds }));
        }
        case 'devinfo': {
          const m = Msg.LocalDevInfo.decode(body);
          if (m.device_uuid) d = site.bind(d, host, remote, m.device_uuid);
          site.noteDevInfo(d, m);
          const c = d.currentDeviceCommand;
          if (c === undefined) return { status: 204 };
          return proto(Msg.LocalDevCmd.encode({ server_token: token, timestamp: c.timestamp, command: DEVICE_CMD_CODE[c.command] }));
        }
        case 'location':
          Msg.ZInfoLocation.decode(body);
          return { status: 200 };
        case 'appbootinfo':
          Msg.AppBootInfoList.decode(body);
          return { status: 204 };
        case 'network':
          Msg.NetworkInfo.decode(body);
          return { status: 204 };
        case 'signal':
          return { status: 200, stream: d };
      }
    } catch (e) {
      d.badBodies++;
      return text(400, `POST ${url} from ${d.uuid ?? d.key}: ${(e as Error).message}`);
    }
  }
}

function proto(body: Uint8Array): LpsReply {
  return { status: 200, body, contentType: PROTO_MIME };
}

function text(status: number, message: string): LpsReply {
  return { status, body: Buffer.from(message + '\n'), contentType: 'text/plain; charset=utf-8' };
}
