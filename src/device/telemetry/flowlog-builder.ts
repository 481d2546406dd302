// FlowMessage for one app interface (wire facts §9): the flows seen on the interface during one
// collection window plus the DNS requests the app made, deterministic from the Rng. Stateless:
// EVE reports per-window flows, and the cumulative flow-log counters live in DeviceCounters.

import { flowlog } from '../../gen/eve-types.js';
import { toTimestamp } from './info-builders.js';
import type { Millis, Rng } from '../ports.js';

export interface FlowScope {
  devId: string;
  appUuid: string;
  /** Interface name inside the app, e.g. "eth0". */
  intf: string;
  /** VIF on the host, e.g. "nbu1x1.1". */
  localIntf: string;
  netInstUuid: string;
  /** The app's IP on this interface. */
  appIp: string;
}

interface Peer {
  host: string;
  addrs: readonly string[];
  port: number;
  protocol: number;
}

// Documentation and example address ranges only (RFC 5737 / 2606): no real hosts.
const PEERS: readonly Peer[] = [
  { host: 'updates.example.com', addrs: ['198.51.100.10', '198.51.100.11'], port: 443, protocol: 6 },
  { host: 'telemetry.example.net', addrs: ['203.0.113.20'], port: 443, protocol: 6 },
  { host: 'mqtt.example.org', addrs: ['203.0.113.31'], port: 8883, protocol: 6 },
  { host: 'registry.example.com', addrs: ['198.51.100.40'], port: 443, protocol: 6 },
  { host: 'ntp.example.net', addrs: ['192.0.2.123'], port: 123, protocol: 17 },
];
const BLOCKED_HOST = 'blocked.example.org';
const CLIENT_NET = '192.0.2.';
const INBOUND_PORTS = [80, 8080, 502] as const;

export interface FlowMessageOptions {
  /** Flow records in this message (FlowSpec flowsPerMessage). */
  flows: number;
  windowStart: Millis;
  windowEnd: Millis;
}

/** Builds the FlowMessage EVE would post for `scope` over [windowStart, windowEnd]. */
export function buildFlowMessage(scope: FlowScope, opts: FlowMessageOptions, rng: Rng): flowlog.FlowMessage {
  const span = Math.max(1, opts.windowEnd - opts.windowStart);
  const at = (): Millis => opts.windowStart + Math.floor(rng.next() * span);
  const flows: flowlog.FlowRecord[] = [];
  const asked = new Set<number>();
  for (let i = 0; i < opts.flows; i++) {
    const kind = rng.next();
    const start = at();
    const end = Math.min(opts.windowEnd, start + Math.floor(rng.range(0, 5_000)));
    if (kind < 0.7) {
      // Outbound to a known peer, accepted.
      const pi = rng.int(PEERS.length);
      const peer = PEERS[pi]!;
      asked.add(pi);
      const txPkts = 1 + rng.int(40);
      const rxPkts = 1 + rng.int(80);
      flows.push({
        flow: { src: scope.appIp, srcPort: 32768 + rng.int(28232), dest: peer.addrs[rng.int(peer.addrs.length)]!, destPort: peer.port, protocol: peer.protocol },
        aclId: 1,
        aclName: 'allow-outbound',
        startTime: toTimestamp(start),
        endTime: toTimestamp(end),
        txBytes: txPkts * (60 + rng.int(400)),
        txPkts,
        rxBytes: rxPkts * (60 + rng.int(1400)),
        rxPkts,
        action: flowlog.ACLAction.ActionAccept,
      });
    } else if (kind < 0.9) {
      // Inbound through a port map, accepted.
      const txPkts = 1 + rng.int(20);
      const rxPkts = 1 + rng.int(20);
      flows.push({
        flow: { src: CLIENT_NET + (2 + rng.int(250)), srcPort: 32768 + rng.int(28232), dest: scope.appIp, destPort: INBOUND_PORTS[rng.int(INBOUND_PORTS.length)]!, protocol: 6 },
        inbound: true,
        aclId: 2,
        aclName: 'portmap',
        startTime: toTimestamp(start),
        endTime: toTimestamp(end),
        txBytes: txPkts * (60 + rng.int(1000)),
        txPkts,
        rxBytes: rxPkts * (60 + rng.int(300)),
        rxPkts,
        action: flowlog.ACLAction.ActionAccept,
      });
    } else {
      // Dropped by ACL (multicast discovery, say): only the first packet is seen.
      flows.push({
        flow: { src: scope.appIp, srcPort: 5353, dest: '224.0.0.251', destPort: 5353, protocol: 17 },
        aclId: -1,
        startTime: toTimestamp(start),
        endTime: toTimestamp(start),
        txBytes: 60 + rng.int(100),
        txPkts: 1,
        action: flowlog.ACLAction.ActionDrop,
      });
    }
  }
  flows.sort((a, b) => (a.startTime!.seconds! - b.startTime!.seconds!) || (a.startTime!.nanos! - b.startTime!.nanos!));

  const dnsReqs: flowlog.DnsRequest[] = [...asked].sort((a, b) => a - b).map((pi) => ({
    hostName: PEERS[pi]!.host,
    addrs: [...PEERS[pi]!.addrs],
    requestTime: toTimestamp(opts.windowStart + Math.floor(rng.next() * Math.min(span, 1000))),
    aclNum: 1,
  }));
  if (opts.flows > 0 && rng.next() < 0.1) {
    dnsReqs.push({ hostName: BLOCKED_HOST, requestTime: toTimestamp(at()), aclNum: 0 });
  }

  const msg: flowlog.FlowMessage = {
    devId: scope.devId,
    scope: { uuid: scope.appUuid, intf: scope.intf, localIntf: scope.localIntf, netInstUUID: scope.netInstUuid },
  };
  if (flows.length) msg.flows = flows;
  if (dnsReqs.length) msg.dnsReqs = dnsReqs;
  return msg;
}
