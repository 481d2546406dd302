// Plausible EVE device and app log entries (wire facts §8.1–8.2), generated at a given lines/s
// rate, deterministic from the Rng. Entries are plain LogEntry-shaped objects (log.proto names:
// severity, source, iid, content, msgid, timestamp {seconds, nanos}, filename, function). msgid
// counts from 0 per stream (one for all device logs, one per app) like newlogd after a start.
// Also the legacy protobuf LogBundle / AppInstanceLogBundle builders for the 'legacy' format.
//
// Writing newlogs gzip files is src/protocol/newlogs.ts's job; this file only produces entries.

import type { logs } from '../../gen/eve-types.js';
import { setTimestamp, toTimestamp, type ProtoTimestamp } from './info-builders.js';
import type { Millis, Rng } from '../ports.js';
import { SmallMap } from '../../memory/small-map.js';

/** A log entry as EVE's newlogd produces it. Fields EVE leaves empty are absent. */
export interface DeviceLogEntry {
  severity: string;
  source: string;
  iid?: string;
  content: string;
  msgid: number;
  timestamp: ProtoTimestamp;
  filename?: string;
  function?: string;
}

/**
 * Receives generated entries one at a time, in time order. The entry is scratch, rewritten for the
 * next one: a visitor that keeps anything copies it (copyLogEntry).
 */
export type LogEntryVisitor = (e: DeviceLogEntry) => void;

/** What a template may use to fill in its text. */
interface TemplateContext {
  rng: Rng;
  now: Millis;
  uptimeS: number;
  eveVersion: string;
  port: string;
}

interface DeviceLogTemplate {
  source: string;
  severity: 'info' | 'warning' | 'error' | 'debug';
  weight: number;
  /** Source file and line as EVE's logrus hook writes it; absent for kernel and non-Go services. */
  filename?: string;
  function?: string;
  text: (t: TemplateContext) => string;
}

const PILLAR = 'github.com/lf-edge/eve/pkg/pillar';
const hex = (rng: Rng, n: number) => {
  let s = '';
  for (let i = 0; i < n; i++) s += '0123456789abcdef'[rng.int(16)];
  return s;
};

// Shared by every device: no per-device closures.
const DEVICE_TEMPLATES: readonly DeviceLogTemplate[] = [
  {
    source: 'zedagent', severity: 'info', weight: 10,
    filename: '/pillar/cmd/zedagent/handleconfig.go:612', function: `${PILLAR}/cmd/zedagent.getLatestConfig`,
    text: () => 'getLatestConfig: config not modified (304)',
  },
  {
    source: 'zedagent', severity: 'info', weight: 6,
    filename: '/pillar/cmd/zedagent/handlemetrics.go:402', function: `${PILLAR}/cmd/zedagent.publishMetrics`,
    text: (t) => `publishMetrics: sent ${2000 + t.rng.int(6000)} bytes`,
  },
  {
    source: 'zedagent', severity: 'info', weight: 4,
    filename: '/pillar/cmd/zedagent/reportinfo.go:533', function: `${PILLAR}/cmd/zedagent.PublishDeviceInfoToZedCloud`,
    text: (t) => `PublishDeviceInfoToZedCloud: sending ${1500 + t.rng.int(3000)} bytes`,
  },
  {
    source: 'nim', severity: 'info', weight: 6,
    filename: '/pillar/dpcmanager/dpcverify.go:164', function: `${PILLAR}/dpcmanager.(*DpcManager).verifyDPC`,
    text: (t) => `port ${t.port}: connected to controller`,
  },
  {
    source: 'nim', severity: 'info', weight: 3,
    filename: '/pillar/cmd/nim/nim.go:548', function: `${PILLAR}/cmd/nim.(*nim).run`,
    text: (t) => `DPC verification succeeded on ${t.port} after ${10 + t.rng.int(400)}ms`,
  },
  {
    source: 'nim', severity: 'warning', weight: 1,
    filename: '/pillar/dpcmanager/dpcverify.go:211', function: `${PILLAR}/dpcmanager.(*DpcManager).verifyDPC`,
    text: (t) => `port ${t.port}: not connected to controller: timeout <10s> & retrying`,
  },
  {
    source: 'newlogd', severity: 'info', weight: 3,
    filename: '/newlog/cmd/newlogd.go:731', function: 'main.writelogFile',
    text: (t) => `writelogFile: dev.log.${t.now}.gz closed, size ${20_000 + t.rng.int(30_000)}`,
  },
  {
    source: 'loguploader', severity: 'info', weight: 3,
    filename: '/pillar/cmd/loguploader/loguploader.go:440', function: `${PILLAR}/cmd/loguploader.sendToCloud`,
    text: (t) => `sendToCloud: sent ok, file time ${t.now - 60_000}, latency ${20 + t.rng.int(300)}`,
  },
  {
    source: 'pillar', severity: 'info', weight: 2,
    filename: '/pillar/agentlog/agentlog.go:388', function: `${PILLAR}/agentlog.logMemUsage`,
    text: (t) => `Memory usage: Alloc ${20 + t.rng.int(40)} MB, TotalAlloc ${1000 + t.rng.int(9000)} MB, Sys ${80 + t.rng.int(60)} MB, NumGC ${t.rng.int(5000)}`,
  },
  {
    source: 'zedmanager', severity: 'info', weight: 2,
    filename: '/pillar/cmd/zedmanager/updatestatus.go:96', function: `${PILLAR}/cmd/zedmanager.updateAIStatusUUID`,
    text: (t) => `updateAIStatusUUID: no change for ${t.rng.uuid()}`,
  },
  {
    source: 'zedrouter', severity: 'info', weight: 2,
    filename: '/pillar/cmd/zedrouter/flowstats.go:210', function: `${PILLAR}/cmd/zedrouter.(*zedrouter).collectFlowlogs`,
    text: (t) => `collectFlowlogs: ${t.rng.int(40)} flows, ${t.rng.int(8)} dns requests`,
  },
  {
    source: 'domainmgr', severity: 'info', weight: 1,
    filename: '/pillar/cmd/domainmgr/domainmgr.go:1350', function: `${PILLAR}/cmd/domainmgr.verifyStatus`,
    text: () => 'verifyStatus: domain state RUNNING',
  },
  {
    source: 'volumemgr', severity: 'info', weight: 1,
    filename: '/pillar/cmd/volumemgr/handlediskmetrics.go:71', function: `${PILLAR}/cmd/volumemgr.publishDiskMetrics`,
    text: (t) => `publishDiskMetrics: ${1 + t.rng.int(6)} volumes`,
  },
  {
    source: 'tpmmgr', severity: 'info', weight: 1,
    filename: '/pillar/cmd/tpmmgr/tpmmgr.go:1120', function: `${PILLAR}/cmd/tpmmgr.handleAttestNonce`,
    text: () => 'handleAttestNonce: quote generated',
  },
  {
    source: 'nodeagent', severity: 'info', weight: 1,
    filename: '/pillar/cmd/nodeagent/handletimers.go:58', function: `${PILLAR}/cmd/nodeagent.handleDeviceTimers`,
    text: (t) => `handleDeviceTimers: uptime ${t.uptimeS}s, connected to controller`,
  },
  {
    source: 'baseosmgr', severity: 'info', weight: 1,
    filename: '/pillar/cmd/baseosmgr/handlebaseos.go:88', function: `${PILLAR}/cmd/baseosmgr.baseOsHandleStatusUpdate`,
    text: (t) => `baseOsHandleStatusUpdate: ${t.eveVersion} partition IMGA active`,
  },
  {
    source: 'kernel', severity: 'info', weight: 3,
    text: (t) => `[${t.uptimeS}.${String(t.rng.int(1_000_000)).padStart(6, '0')}] bn1: port ${1 + t.rng.int(3)}(nbu1x${1 + t.rng.int(3)}.1) entered forwarding state`,
  },
  {
    source: 'kernel', severity: 'info', weight: 1,
    text: (t) => `[${t.uptimeS}.${String(t.rng.int(1_000_000)).padStart(6, '0')}] ${t.port}: Link is Up - 1Gbps/Full - flow control rx/tx`,
  },
  {
    source: 'containerd', severity: 'info', weight: 2,
    text: (t) => `time="${new Date(t.now).toISOString().replace(/\.\d{3}Z$/, 'Z')}" level=info msg="shim disconnected" id=${hex(t.rng, 8)}`,
  },
  {
    source: 'zedagent', severity: 'error', weight: 0.3,
    filename: '/pillar/cmd/zedagent/handlemetrics.go:415', function: `${PILLAR}/cmd/zedagent.publishMetrics`,
    text: () => 'publishMetrics: SendOnAllIntf failed: all interfaces failed',
  },
];
const DEVICE_TOTAL_WEIGHT = DEVICE_TEMPLATES.reduce((s, t) => s + t.weight, 0);

const APP_MESSAGES: readonly ((rng: Rng) => string)[] = [
  (rng) => `10.1.0.${2 + rng.int(200)} - - "GET /healthz HTTP/1.1" 200 2`,
  (rng) => `10.1.0.${2 + rng.int(200)} - - "POST /api/v1/readings HTTP/1.1" 201 ${10 + rng.int(90)}`,
  (rng) => `worker process ${20 + rng.int(200)} exited`,
  (rng) => `poll cycle done: ${rng.int(64)} registers read in ${1 + rng.int(50)}ms`,
  () => 'connection to upstream re-established',
];

/** A running app whose console output is being collected. */
export interface AppLogSource {
  uuid: string;
  /** EVE domain name "<uuid>.<version>.<n>", used as the entry source. */
  domainName: string;
  /** Container name inside the app (EVE wraps container output as JSON). */
  container?: string;
}

// Generation is synchronous and each visitor is done with an entry before the next is written, so
// one scratch entry, timestamp and template context per thread serve every device: a line costs
// its content string and nothing else (the worker writes thousands of lines a second).
const scratchTimestamp: ProtoTimestamp = { seconds: 0, nanos: 0 };
const scratchEntry: DeviceLogEntry = {
  severity: '',
  source: '',
  iid: undefined,
  content: '',
  msgid: 0,
  timestamp: scratchTimestamp,
  filename: undefined,
  function: undefined,
};
// rng is set before every use.
const scratchContext: TemplateContext = { rng: undefined as unknown as Rng, now: 0, uptimeS: 0, eveVersion: '', port: '' };
/** Sorted line times of one call. */
let scratchTimes = new Float64Array(256);
/** iid texts of the pids pidOf gives (900 + 0..2999), made once per thread. */
const IID_TEXT: string[] = new Array<string>(3000).fill('');

/** A kept copy of a visited entry, with only the fields it has (as the entries were built before). */
export function copyLogEntry(e: DeviceLogEntry): DeviceLogEntry {
  const c: DeviceLogEntry = { severity: e.severity, source: e.source, content: e.content, msgid: e.msgid, timestamp: { seconds: e.timestamp.seconds, nanos: e.timestamp.nanos } };
  if (e.iid !== undefined) c.iid = e.iid;
  if (e.filename !== undefined) c.filename = e.filename;
  if (e.function !== undefined) c.function = e.function;
  return c;
}

/** Per-app stream state. */
class AppStream {
  msgid = 0;
  carry = 0;
}

/**
 * Log entry generator for one device. Holds only counters; templates and texts are shared.
 * Line counts follow the rate exactly over time (fractions carry over between calls).
 */
export class LogGenerator {
  private deviceMsgid = 0;
  private deviceCarry = 0;
  private apps: SmallMap<string, AppStream> | undefined;

  constructor(
    private readonly deviceIndex: number,
    private readonly eveVersion: string,
    private bootTime: Millis,
  ) {}

  /** Next device msgid (also the count of device entries so far since start). */
  get deviceMsgidNext(): number {
    return this.deviceMsgid;
  }

  /** newlogd restarts with the device: msgid counters start again at 0. */
  restart(bootTime: Millis): void {
    this.bootTime = bootTime;
    this.deviceMsgid = 0;
    this.deviceCarry = 0;
    this.apps = undefined;
  }

  /** Device log entries for the interval (from, to], at `linesPerSec`, in time order. */
  deviceEntries(from: Millis, to: Millis, linesPerSec: number, rng: Rng): DeviceLogEntry[] {
    const out: DeviceLogEntry[] = [];
    this.visitDeviceEntries(from, to, linesPerSec, rng, (e) => out.push(copyLogEntry(e)));
    return out;
  }

  /** deviceEntries, one scratch entry at a time (LogEntryVisitor); returns how many. */
  visitDeviceEntries(from: Millis, to: Millis, linesPerSec: number, rng: Rng, visit: LogEntryVisitor): number {
    const n = this.countFor(to - from, linesPerSec);
    const times = sortedTimes(from, to, n, rng);
    for (let i = 0; i < n; i++) visit(this.deviceEntryAt(times[i]!, rng));
    return n;
  }

  /** One specific device event (e.g. "config applied") with the next msgid. */
  deviceEvent(at: Millis, source: string, severity: string, content: string, filename?: string, fn?: string): DeviceLogEntry {
    const e: DeviceLogEntry = { severity, source, content, msgid: this.deviceMsgid++, timestamp: toTimestamp(at) };
    if (source !== 'kernel') e.iid = String(this.pidOf(source));
    if (filename) e.filename = filename;
    if (fn) e.function = fn;
    return e;
  }

  /** App console entries for (from, to] at `linesPerSec`; msgid counts per app from 0. */
  appEntries(app: AppLogSource, from: Millis, to: Millis, linesPerSec: number, rng: Rng): DeviceLogEntry[] {
    const out: DeviceLogEntry[] = [];
    this.visitAppEntries(app, from, to, linesPerSec, rng, (e) => out.push(copyLogEntry(e)));
    return out;
  }

  /**
   * How many device lines (from, to] holds, without making them: the device stops and they are
   * only counted. The msgids and the rate's carry advance as if they had been made.
   */
  countDeviceLines(from: Millis, to: Millis, linesPerSec: number): number {
    const n = this.countFor(to - from, linesPerSec);
    this.deviceMsgid += n;
    return n;
  }

  /** countDeviceLines for an app's console. */
  countAppLines(app: AppLogSource, from: Millis, to: Millis, linesPerSec: number): number {
    const s = this.appStream(app);
    const n = this.appCountFor(s, from, to, linesPerSec);
    s.msgid += n;
    return n;
  }

  /** appEntries, one scratch entry at a time (LogEntryVisitor); returns how many. */
  visitAppEntries(app: AppLogSource, from: Millis, to: Millis, linesPerSec: number, rng: Rng, visit: LogEntryVisitor): number {
    const s = this.appStream(app);
    const n = this.appCountFor(s, from, to, linesPerSec);
    const times = sortedTimes(from, to, n, rng);
    const e = scratchEntry;
    e.severity = 'info';
    e.source = app.domainName;
    e.iid = e.filename = e.function = undefined;
    for (let i = 0; i < n; i++) {
      const t = times[i]!;
      const msg = APP_MESSAGES[rng.int(APP_MESSAGES.length)]!(rng);
      e.content = app.container
        ? JSON.stringify({ container: app.container, time: new Date(t).toISOString(), msg })
        : msg;
      e.msgid = s.msgid++;
      setTimestamp(e.timestamp, t);
      visit(e);
    }
    return n;
  }

  private appStream(app: AppLogSource): AppStream {
    this.apps ??= new SmallMap();
    let s = this.apps.get(app.uuid);
    if (!s) {
      s = new AppStream();
      this.apps.set(app.uuid, s);
    }
    return s;
  }

  private appCountFor(s: AppStream, from: Millis, to: Millis, linesPerSec: number): number {
    const expected = ((to - from) / 1000) * linesPerSec + s.carry;
    const n = Math.max(0, Math.floor(expected));
    s.carry = expected - n;
    return n;
  }

  /** Forgets a deleted app's counters. */
  removeApp(uuid: string): void {
    this.apps?.delete(uuid);
  }

  private countFor(durationMs: number, linesPerSec: number): number {
    const expected = (Math.max(0, durationMs) / 1000) * linesPerSec + this.deviceCarry;
    const n = Math.floor(expected);
    this.deviceCarry = expected - n;
    return n;
  }

  private deviceEntryAt(at: Millis, rng: Rng): DeviceLogEntry {
    let pick = rng.next() * DEVICE_TOTAL_WEIGHT;
    let tpl = DEVICE_TEMPLATES[0]!;
    for (const t of DEVICE_TEMPLATES) {
      pick -= t.weight;
      if (pick < 0) {
        tpl = t;
        break;
      }
    }
    const ctx = scratchContext;
    ctx.rng = rng;
    ctx.now = at;
    ctx.uptimeS = Math.max(0, Math.floor((at - this.bootTime) / 1000));
    ctx.eveVersion = this.eveVersion;
    ctx.port = rng.next() < 0.8 ? 'eth0' : 'eth1';
    const e = scratchEntry;
    e.content = tpl.text(ctx);
    e.severity = tpl.severity;
    e.source = tpl.source;
    e.msgid = this.deviceMsgid++;
    setTimestamp(e.timestamp, at);
    e.iid = tpl.source !== 'kernel' ? iidText(this.pidOf(tpl.source)) : undefined;
    e.filename = tpl.filename || undefined;
    e.function = tpl.function || undefined;
    return e;
  }

  /** A stable pid per (device, source), computed instead of stored. */
  private pidOf(source: string): number {
    let h = Math.imul(this.deviceIndex + 1, 0x9e3779b1);
    for (let i = 0; i < source.length; i++) h = Math.imul(h ^ source.charCodeAt(i), 0x01000193);
    return 900 + ((h >>> 0) % 3000);
  }
}

/** The pid's iid text, made once per thread. */
function iidText(pid: number): string {
  return (IID_TEXT[pid - 900] ||= String(pid));
}

/**
 * n times uniformly in (from, to], ascending, whole ms: a view of the thread's scratch array,
 * valid until the next call (a typed array sorts numerically in place, with no comparator calls).
 */
function sortedTimes(from: Millis, to: Millis, n: number, rng: Rng): Float64Array {
  const span = Math.max(0, to - from);
  if (scratchTimes.length < n) scratchTimes = new Float64Array(Math.max(n, 2 * scratchTimes.length));
  const t = scratchTimes.subarray(0, n);
  for (let i = 0; i < n; i++) t[i] = from + Math.max(1, Math.ceil(rng.next() * span));
  return t.sort();
}

// ---------------------------------------------------------------------------------------------
// Legacy protobuf bundles (logFormat 'legacy': POST /logs and the app /logs route)

export function buildLogBundle(
  devId: string,
  eveVersion: string,
  image: 'IMGA' | 'IMGB',
  entries: readonly DeviceLogEntry[],
  now: Millis,
): logs.LogBundle {
  return { devID: devId, image, log: entries.map(toProtoEntry), timestamp: toTimestamp(now), eveVersion };
}

export function buildAppLogBundle(entries: readonly DeviceLogEntry[], now: Millis): logs.AppInstanceLogBundle {
  return { log: entries.map(toProtoEntry), timestamp: toTimestamp(now) };
}

function toProtoEntry(e: DeviceLogEntry): logs.LogEntry {
  return { ...e };
}
