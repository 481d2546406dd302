// ZMetricMsg for a simulated EVE node (wire facts §7): device metrics (dm) with cumulative
// counters that grow plausibly with elapsed time, controller-connection statistics fed from the
// device's real requests (zedcloud urlMetrics, as EVE's AgentMetrics records them), log-uploader
// and flow-log statistics, and per-app metrics (am).
//
// State per device is one DeviceCounters object: a few Float64Arrays and small Maps, no closures.

import type { metrics } from '../../gen/eve-types.js';
import type { ApiVersion } from '../../protocol/api-version.js';
import { v2Path, type EndpointKey } from '../../protocol/endpoints.js';
import { v1Path } from '../../protocol/v1-endpoints.js';
import { smallArraySlab } from '../../memory/small-array-slab.js';
import { flatString } from '../core/flat-string.js';
import { withPairAppended } from '../../memory/exact-array.js';
import { durationAsTimestamp, managementPorts, toTimestamp } from './info-builders.js';
import type { Millis, Rng } from '../ports.js';
import { SmallMap } from '../../memory/small-map.js';

const MB = 1024 * 1024;

// Device counter slots (one Float64Array per device).
const D = {
  lastAt: 0,
  cpuSec: 1, // cumulative CPU seconds (all cores)
  cpuLoad: 2, // mean busy fraction of the whole machine, fixed per device
  eveMemMB: 3, // EVE's own memory use, fixed per device with small wobble
  diskReadB: 4,
  diskWriteB: 5,
  diskReadOps: 6,
  diskWriteOps: 7,
  diskReadRate: 8, // bytes/s
  diskWriteRate: 9,
  persistUsedMB: 10,
  // per port p (0, 1): base 11 + p*8: txB, rxB, txPkt, rxPkt, txDrop, rxDrop, txRate, rxRate
  port0: 11,
  port1: 19,
  // controller connection (interface eth0)
  zcSuccess: 27,
  zcFailure: 28,
  zcLastSuccess: 29,
  zcLastFailure: 30,
  zcAuthFail: 31,
  // log uploader
  logBytesUp: 32,
  logFilesSent: 33,
  logFilesRetry: 34,
  log4xx: 35,
  log429: 36,
  logMaxUploadMs: 37,
  logSumUploadMs: 38,
  logLastUploadMs: 39,
  logInputEvents: 40,
  logBytesWritten: 41,
  logGzipBytes: 42,
  logMaxGzip: 43,
  logLastSendAt: 44,
  logFilesInDir: 45,
  logIntervalS: 46,
  appLogFilesSent: 47,
  appLogInputEvents: 48,
  // flow log
  flowMsgOk: 49,
  flowMsgDrop: 50,
  flowMsgFail: 51,
  flowFlowsOk: 52,
  flowDnsOk: 53,
  size: 54,
} as const;
const PORT_STRIDE = 8;
const P = { txB: 0, rxB: 1, txPkt: 2, rxPkt: 3, txDrop: 4, rxDrop: 5, txRate: 6, rxRate: 7 } as const;

// Per-app counter slots.
const A = {
  lastAt: 0,
  cpuSec: 1,
  cpuLoad: 2,
  txB: 3,
  rxB: 4,
  txPkt: 5,
  rxPkt: 6,
  txRate: 7,
  rxRate: 8,
  memFrac: 9,
  diskUsedFrac: 10,
  size: 11,
} as const;

// Per-URL slots, in urlcloudMetric field order.
const U = { tryMsg: 0, tryB: 1, sentMsg: 2, sentB: 3, recvMsg: 4, recvB: 5, timeMs: 6, resume: 7, size: 8 } as const;
/** Per-URL slots made at the first request: a device of steady-state.yaml uses about ten. */
const URL_SLOTS_FIRST = 12;

/** One controller request as the device saw it. */
export interface RequestRecord {
  /** The endpoint, and for app logs the app instance: what EVE's URL key names (see urlOf). */
  endpoint: EndpointKey;
  appUuid?: string | undefined;
  reqBytes: number;
  /** Response body bytes (0 when there was no answer). */
  respBytes: number;
  /** True for 200/201/204/304; false for an error status or no answer. */
  success: boolean;
  /** True when the response signature failed verification (counted apart, as EVE does). */
  authFailure?: boolean;
  latencyMs: number;
  /** TLS session was resumed. */
  resumed?: boolean;
  at: Millis;
}

export interface MetricsAppInput {
  uuid: string;
  name: string;
  version: string;
  running: boolean;
  bootTime?: Millis;
  /** Memory the app was given, MB. */
  allocatedMB: number;
  vifNames: readonly string[];
  volumes: ReadonlyArray<{ uuid: string; provisionedMB: number; diskType: string }>;
}

export interface MetricsInput {
  devId: string;
  deviceIndex: number;
  hardware: { ncpu: number; memoryMB: number; storageMB: number };
  bootTime: Millis;
  apps: readonly MetricsAppInput[];
  lastReceivedConfig?: Millis;
  lastProcessedConfig?: Millis;
  /** Per-modem signal and packet counters (dm.cellular, field 20); absent without modems. */
  cellular?: metrics.CellularMetric[];
  /** The controller as EVE's /config/server names it (host:port), the start of each urlMetrics URL; absent: the paths alone. */
  server?: string;
  /** The API whose paths the device sends (absent: v2). */
  api?: ApiVersion;
}

/**
 * The URL key of EVE's zedcloud metrics: /config/server followed by the request path
 * (zedcloud.URLPathString, "host:port/api/v2/edgedevice/id/<uuid>/config", no scheme).
 */
export function urlOf(m: Pick<MetricsInput, 'server' | 'api' | 'devId'>, endpoint: EndpointKey, appUuid: string | undefined): string {
  return (m.server ?? '') + (m.api === 'v1' ? v1Path(endpoint, m.devId, appUuid) : v2Path(endpoint, m.devId, appUuid));
}

const EVE_BASE_MEM_MB = 1100;
const PERSIST_SHARE = 0.92;

export class DeviceCounters {
  // Views into the thread's small-array slab (memory/small-array-slab.ts), not arrays of their own.
  private c = smallArraySlab.float64(D.size);
  private apps: SmallMap<string, Float64Array> | undefined;
  /**
   * Per-URL counters (zedcloud urlMetrics), a slot per endpoint (and app, for app logs) in
   * first-use order: slot i counts endpoint urlKeys[2i] of app urlKeys[2i + 1], in urlCounts from
   * i × U.size. urlKeys is one array of exactly its length, replaced when a slot is added (about ten
   * times in a device's life): two arrays grown by push kept room for 40 entries each.
   * The URL text is made only when metrics are built: kept per device, a Map keyed by the request
   * paths (each holding the device UUID) cost 1.6 KiB a device.
   */
  private urlKeys: ReadonlyArray<EndpointKey | string | undefined> | undefined;
  private urlCounts: Float64Array | undefined;

  /** Picks this device's activity levels (once) and starts counting at `bootTime`. */
  constructor(rng: Rng, hardware: { storageMB: number }, bootTime: Millis) {
    const c = this.c;
    c[D.lastAt] = bootTime;
    c[D.cpuLoad] = rng.range(0.03, 0.15);
    c[D.eveMemMB] = EVE_BASE_MEM_MB + rng.range(0, 400);
    c[D.diskReadRate] = rng.range(2_000, 40_000);
    c[D.diskWriteRate] = rng.range(5_000, 80_000);
    c[D.persistUsedMB] = hardware.storageMB * PERSIST_SHARE * rng.range(0.05, 0.25);
    for (const base of [D.port0, D.port1]) {
      const busy = base === D.port0 ? 1 : 0.1;
      c[base + P.txRate] = busy * rng.range(500, 20_000);
      c[base + P.rxRate] = busy * rng.range(1_000, 60_000);
    }
  }

  /** Advances all cumulative counters to `now` (never backwards). */
  advance(now: Millis, rng: Rng, apps: readonly MetricsAppInput[] = []): void {
    const c = this.c;
    const dt = (now - c[D.lastAt]!) / 1000;
    if (dt > 0) {
      c[D.lastAt] = now;
      const wobble = () => rng.range(0.6, 1.4);
      c[D.cpuSec] += dt * c[D.cpuLoad]! * wobble();
      const rd = dt * c[D.diskReadRate]! * wobble();
      const wr = dt * c[D.diskWriteRate]! * wobble();
      c[D.diskReadB] += rd;
      c[D.diskWriteB] += wr;
      c[D.diskReadOps] += Math.round(rd / 16_384);
      c[D.diskWriteOps] += Math.round(wr / 8_192);
      c[D.persistUsedMB] += (wr / MB) * 0.01; // most writes are rewrites
      for (const base of [D.port0, D.port1]) {
        const tx = dt * c[base + P.txRate]! * wobble();
        const rx = dt * c[base + P.rxRate]! * wobble();
        c[base + P.txB] += Math.round(tx);
        c[base + P.rxB] += Math.round(rx);
        c[base + P.txPkt] += Math.round(tx / 600);
        c[base + P.rxPkt] += Math.round(rx / 900);
        if (rng.next() < dt / 3600) c[base + P.rxDrop] += 1 + rng.int(3);
      }
    }
    for (const app of apps) this.advanceApp(app, now, rng);
  }

  private advanceApp(app: MetricsAppInput, now: Millis, rng: Rng): void {
    this.apps ??= new SmallMap();
    let a = this.apps.get(app.uuid);
    if (!a) {
      a = smallArraySlab.float64(A.size);
      a[A.lastAt] = app.bootTime ?? now;
      a[A.cpuLoad] = rng.range(0.01, 0.3);
      a[A.txRate] = rng.range(200, 30_000);
      a[A.rxRate] = rng.range(200, 10_000);
      a[A.memFrac] = rng.range(0.1, 0.6);
      a[A.diskUsedFrac] = rng.range(0.02, 0.3);
      this.apps.set(app.uuid, a);
    }
    const dt = (now - a[A.lastAt]!) / 1000;
    if (dt <= 0) return;
    a[A.lastAt] = now;
    if (!app.running) return;
    a[A.cpuSec] += dt * a[A.cpuLoad]! * rng.range(0.6, 1.4);
    const tx = Math.round(dt * a[A.txRate]! * rng.range(0.6, 1.4));
    const rx = Math.round(dt * a[A.rxRate]! * rng.range(0.6, 1.4));
    a[A.txB] += tx;
    a[A.rxB] += rx;
    a[A.txPkt] += Math.round(tx / 700);
    a[A.rxPkt] += Math.round(rx / 500);
  }

  /**
   * The device rebooted and counts anew in another DeviceCounters: this one's slab views go back
   * for reuse. Nothing may record here afterwards (the sender drops an answer that comes back
   * across a reboot); if something did, it would write into a private array, not a reused view.
   */
  retire(): void {
    smallArraySlab.give(this.c);
    this.c = new Float64Array(D.size);
    if (this.apps) for (const a of this.apps.values()) smallArraySlab.give(a);
    this.apps = undefined;
    if (this.urlCounts) smallArraySlab.give(this.urlCounts);
    this.urlCounts = undefined;
    this.urlKeys = undefined;
  }

  /** Forgets a deleted app. */
  removeApp(uuid: string): void {
    const a = this.apps?.get(uuid);
    if (a === undefined) return;
    this.apps!.delete(uuid);
    smallArraySlab.give(a);
  }

  /** Records one controller request (success or failure), like EVE's AgentMetrics. */
  recordRequest(r: RequestRecord): void {
    const c = this.c;
    if (r.authFailure) {
      c[D.zcAuthFail]++;
      return;
    }
    const o = this.urlSlot(r.endpoint, r.appUuid) * U.size;
    const a = this.urlCounts!;
    if (r.success) {
      c[D.zcSuccess]++;
      c[D.zcLastSuccess] = r.at;
      a[o + U.sentMsg]++;
      a[o + U.sentB] += r.reqBytes;
      a[o + U.recvMsg]++;
      a[o + U.recvB] += r.respBytes;
      a[o + U.timeMs] += Math.round(r.latencyMs);
      if (r.resumed) a[o + U.resume]++;
    } else {
      c[D.zcFailure]++;
      c[D.zcLastFailure] = r.at;
      a[o + U.tryMsg]++;
      a[o + U.tryB] += r.reqBytes;
      if (r.respBytes !== 0) {
        a[o + U.recvMsg]++;
        a[o + U.recvB] += r.respBytes;
      }
    }
  }

  /** Device (or app) log lines handed to the log writer. */
  recordLogInput(lines: number, rawBytes: number, app = false): void {
    if (app) this.c[D.appLogInputEvents] += lines;
    else this.c[D.logInputEvents] += lines;
    this.c[D.logBytesWritten] += rawBytes;
  }

  /** A gzip file was closed (its compressed size). */
  recordGzipFile(bytes: number): void {
    this.c[D.logGzipBytes] += bytes;
    if (bytes > this.c[D.logMaxGzip]!) this.c[D.logMaxGzip] = bytes;
  }

  /** One newlogs upload attempt. `status` undefined = no answer. */
  recordLogUpload(r: { bytes: number; status?: number; latencyMs: number; at: Millis; app?: boolean }): void {
    const c = this.c;
    if (r.status === 200 || r.status === 201) {
      c[D.logBytesUp] += r.bytes;
      if (r.app) c[D.appLogFilesSent]++;
      else c[D.logFilesSent]++;
      c[D.logLastUploadMs] = Math.round(r.latencyMs);
      c[D.logSumUploadMs] += Math.round(r.latencyMs);
      if (r.latencyMs > c[D.logMaxUploadMs]!) c[D.logMaxUploadMs] = Math.round(r.latencyMs);
      c[D.logLastSendAt] = r.at;
      return;
    }
    c[D.logFilesRetry]++;
    if (r.status !== undefined && r.status >= 400 && r.status < 500) c[D.log4xx]++;
    if (r.status === 429) c[D.log429]++;
  }

  /** Log uploader state: files waiting and the current upload interval. */
  setLogBacklog(filesInDir: number, uploadIntervalS: number): void {
    this.c[D.logFilesInDir] = filesInDir;
    this.c[D.logIntervalS] = uploadIntervalS;
  }

  /** One flow-log message outcome. */
  recordFlowlog(r: { delivered: boolean; flows: number; dnsRequests: number; dropped?: boolean }): void {
    const c = this.c;
    if (r.dropped) c[D.flowMsgDrop]++;
    else if (r.delivered) {
      c[D.flowMsgOk]++;
      c[D.flowFlowsOk] += r.flows;
      c[D.flowDnsOk] += r.dnsRequests;
    } else c[D.flowMsgFail]++;
  }

  /** Read access for tests and the progress view. */
  get(name: keyof typeof D): number {
    return this.c[D[name]]!;
  }
  appCounter(uuid: string, name: keyof typeof A): number | undefined {
    return this.apps?.get(uuid)?.[A[name]];
  }
  urlCounter(endpoint: EndpointKey, name: keyof typeof U, appUuid?: string): number | undefined {
    const slot = this.findUrlSlot(endpoint, appUuid);
    return slot < 0 ? undefined : this.urlCounts![slot * U.size + U[name]];
  }

  private findUrlSlot(endpoint: EndpointKey, appUuid: string | undefined): number {
    const keys = this.urlKeys;
    if (keys === undefined) return -1;
    for (let i = 0; i < keys.length; i += 2) if (keys[i] === endpoint && keys[i + 1] === appUuid) return i >> 1;
    return -1;
  }

  /** The slot of an endpoint's URL (added on first use; a device uses about ten). */
  private urlSlot(endpoint: EndpointKey, appUuid: string | undefined): number {
    const found = this.findUrlSlot(endpoint, appUuid);
    if (found >= 0) return found;
    const keys = this.urlKeys ?? [];
    const slot = keys.length >> 1;
    // A flat copy: a UUID cut out of a request path would keep the whole path alive.
    this.urlKeys = withPairAppended(keys, endpoint, appUuid === undefined ? undefined : flatString(appUuid));
    const need = (slot + 1) * U.size;
    if (!this.urlCounts || this.urlCounts.length < need) {
      // Room for the dozen URLs a device uses, doubled if it needs more: grown a slot at a time, a
      // fleet whose devices all onboard together would leave a trail of outgrown views of every
      // size in the slab that no device asks for again.
      const grown = smallArraySlab.float64(Math.max(need, this.urlCounts ? 2 * this.urlCounts.length : URL_SLOTS_FIRST * U.size));
      if (this.urlCounts) {
        grown.set(this.urlCounts);
        smallArraySlab.give(this.urlCounts);
      }
      this.urlCounts = grown;
    }
    return slot;
  }

  // --- building -------------------------------------------------------------------------------

  /** Advances the counters to `now` and returns the ZMetricMsg EVE would send. */
  build(m: MetricsInput, now: Millis, rng: Rng): metrics.ZMetricMsg {
    this.advance(now, rng, m.apps);
    const c = this.c;
    const hw = m.hardware;
    const allocatedApps = m.apps.reduce((s, a) => s + (a.running ? a.allocatedMB : 0), 0);
    const eveUsed = Math.round(c[D.eveMemMB]! * rng.range(0.97, 1.03));
    const used = Math.min(hw.memoryMB, eveUsed + allocatedApps);
    const avail = hw.memoryMB - used;
    const uptimeMs = now - m.bootTime;

    const dm: metrics.deviceMetric = {
      memory: {
        usedMem: used,
        availMem: avail,
        usedPercentage: pct(used, hw.memoryMB),
        availPercentage: pct(avail, hw.memoryMB),
      },
      network: managementPorts(m.deviceIndex).map((p, i) => {
        const b = i === 0 ? D.port0 : D.port1;
        return {
          iName: p.ifname,
          txBytes: c[b + P.txB],
          rxBytes: c[b + P.rxB],
          txDrops: c[b + P.txDrop],
          rxDrops: c[b + P.rxDrop],
          txPkts: c[b + P.txPkt],
          rxPkts: c[b + P.rxPkt],
          localName: p.ifname,
          alias: p.label,
        };
      }),
      zedcloud: [this.zedcloudMetric(m)],
      disk: [
        {
          disk: 'sda',
          readBytes: Math.floor(c[D.diskReadB]! / MB),
          writeBytes: Math.floor(c[D.diskWriteB]! / MB),
          readCount: c[D.diskReadOps],
          writeCount: c[D.diskWriteOps],
        },
        (() => {
          const total = Math.floor(hw.storageMB * PERSIST_SHARE);
          const usedMB = Math.min(total, Math.floor(c[D.persistUsedMB]!));
          return { disk: '/persist', mountPath: '/persist', total, used: usedMB, free: total - usedMB };
        })(),
      ],
      cpuMetric: cpuMetric(uptimeMs, c[D.cpuSec]!),
      runtimeStorageOverheadMB: 512,
      appRunTimeStorageMB: m.apps.reduce((s, a) => s + a.volumes.reduce((t, v) => t + v.provisionedMB, 0), 0),
      systemServicesMemoryMB: { usedMem: eveUsed, availMem: Math.max(0, 2000 - eveUsed) },
      newlog: this.newlogMetric(),
      zedbox: { numGoRoutines: 900 + rng.int(400) },
      deviceMemory: { memoryMB: hw.memoryMB, allocated_appsMB: allocatedApps, allocated_eveMB: 2000, used_eveMB: eveUsed },
      flowlog: {
        messages: { success: c[D.flowMsgOk], drops: c[D.flowMsgDrop], failed_attempts: c[D.flowMsgFail] },
        flows: { success: c[D.flowFlowsOk] },
        dns_requests: { success: c[D.flowDnsOk] },
      },
      dormant_time_in_seconds: 0,
    };
    if (m.lastReceivedConfig !== undefined) dm.last_received_config = toTimestamp(m.lastReceivedConfig);
    if (m.lastProcessedConfig !== undefined) dm.last_processed_config = toTimestamp(m.lastProcessedConfig);
    if (m.cellular !== undefined) dm.cellular = m.cellular;

    const msg: metrics.ZMetricMsg = { devID: m.devId, atTimeStamp: toTimestamp(now), dm };
    const am = m.apps.filter((a) => a.running).map((a) => this.appMetric(a, now));
    if (am.length) msg.am = am;
    return msg;
  }

  private zedcloudMetric(m: MetricsInput): metrics.zedcloudMetric {
    const c = this.c;
    const z: metrics.zedcloudMetric = {
      ifName: 'eth0',
      failures: c[D.zcFailure],
      success: c[D.zcSuccess],
      authVerifyFailure: c[D.zcAuthFail],
    };
    if (c[D.zcLastFailure]) z.lastFailure = toTimestamp(c[D.zcLastFailure]!);
    if (c[D.zcLastSuccess]) z.lastSuccess = toTimestamp(c[D.zcLastSuccess]!);
    const keys = this.urlKeys;
    if (keys !== undefined && keys.length > 0) {
      const a = this.urlCounts!;
      z.urlMetrics = [];
      for (let slot = 0; slot < keys.length >> 1; slot++) {
        const o = slot * U.size;
        z.urlMetrics.push({
          url: urlOf(m, keys[2 * slot] as EndpointKey, keys[2 * slot + 1]),
          tryMsgCount: a[o + U.tryMsg],
          tryByteCount: a[o + U.tryB],
          sentMsgCount: a[o + U.sentMsg],
          sentByteCount: a[o + U.sentB],
          recvMsgCount: a[o + U.recvMsg],
          recvByteCount: a[o + U.recvB],
          total_time_spent: a[o + U.timeMs],
          sess_resume_count: a[o + U.resume],
        });
      }
    }
    return z;
  }

  private newlogMetric(): metrics.newlogMetric {
    const c = this.c;
    const sent = c[D.logFilesSent]! + c[D.appLogFilesSent]!;
    const n: metrics.newlogMetric = {
      totalBytesUpload: c[D.logBytesUp],
      num4xxResponses: c[D.log4xx],
      currentUploadIntv: c[D.logIntervalS] || 90,
      logfileTimeout: 300,
      maxGzipFileSize: c[D.logMaxGzip],
      avgGzipFileSize: sent ? Math.round(c[D.logBytesUp]! / sent) : 0,
      maxUploadMsec: c[D.logMaxUploadMs],
      avgUploadMsec: sent ? Math.round(c[D.logSumUploadMs]! / sent) : 0,
      lastUploadMsec: c[D.logLastUploadMs],
      tooManyRequest: c[D.log429],
      deviceMetrics: {
        numGzipFileSent: c[D.logFilesSent],
        numGzipBytesWrite: c[D.logGzipBytes],
        numBytesWrite: c[D.logBytesWritten],
        numGzipFileInDir: c[D.logFilesInDir],
        numInputEvent: c[D.logInputEvents],
        numGzipFileRetry: c[D.logFilesRetry],
      },
      appMetrics: { numGzipFileSent: c[D.appLogFilesSent], numInputEvent: c[D.appLogInputEvents] },
    };
    if (c[D.logLastSendAt]) n.deviceMetrics!.lastGzipFileSendTime = toTimestamp(c[D.logLastSendAt]!);
    return n;
  }

  private appMetric(app: MetricsAppInput, now: Millis): metrics.appMetric {
    const a = this.apps!.get(app.uuid)!;
    const usedMB = Math.round(app.allocatedMB * a[A.memFrac]!);
    const out: metrics.appMetric = {
      AppID: app.uuid,
      AppName: app.name,
      appVersion: app.version,
      cpu: cpuMetric(app.bootTime !== undefined ? now - app.bootTime : 0, a[A.cpuSec]!),
      memory: {
        usedMem: usedMB,
        availMem: app.allocatedMB - usedMB,
        usedPercentage: pct(usedMB, app.allocatedMB),
        availPercentage: pct(app.allocatedMB - usedMB, app.allocatedMB),
      },
      appMemory: { allocatedMB: app.allocatedMB, usedMB },
    };
    if (app.vifNames.length) {
      // The first VIF carries the traffic; others see a trickle.
      out.network = app.vifNames.map((vif, i) => {
        const share = i === 0 ? 1 : 0.01;
        return {
          iName: vif,
          txBytes: Math.round(a[A.txB]! * share),
          rxBytes: Math.round(a[A.rxB]! * share),
          txPkts: Math.round(a[A.txPkt]! * share),
          rxPkts: Math.round(a[A.rxPkt]! * share),
          localName: vif,
        };
      });
    }
    if (app.volumes.length) {
      out.disk = app.volumes.map((v) => ({
        disk: v.uuid,
        provisioned: v.provisionedMB,
        used: Math.round(v.provisionedMB * a[A.diskUsedFrac]!),
        diskType: v.diskType,
      }));
    }
    return out;
  }
}

function cpuMetric(uptimeMs: number, cpuSec: number): metrics.appCpuMetric {
  const total = Math.floor(cpuSec);
  return {
    upTime: durationAsTimestamp(uptimeMs),
    total,
    total_ns: Math.floor(cpuSec * 1e6) * 1000, // µs resolution keeps it exact below 2^53
  };
}

function pct(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 10_000) / 100 : 0;
}
