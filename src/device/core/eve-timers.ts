// EVE's timer rules (wire facts §3.6, §5.4, §7.4, §8.3, §9, §2.2) as pure functions of an Rng, plus
// parsing of the controller's global config items into a typed DeviceTimers object. Nothing here
// schedules anything: the device asks for a delay and hands it to its Scheduler.

import type { Millis, Rng } from '../ports.js';

const SEC = 1000;
const U32_MAX = 4294967295;

// ---------------------------------------------------------------------------------------------
// Global config items (§3.6)

/** Timing-relevant global config, already validated (seconds unless the name says otherwise). */
export interface DeviceTimers {
  configIntervalS: number;
  metricIntervalS: number;
  deviceInfoIntervalS: number;
  certIntervalS: number;
  locationCloudIntervalS: number;
  locationAppIntervalS: number;
  hardwareHealthIntervalS: number;
  ntpSourcesIntervalS: number;
  sendTimeoutS: number;
  dialTimeoutS: number;
  rebootNoNetworkS: number;
  updateFallbackNoNetworkS: number;
  testBaseImageUpdateS: number;
  portTestIntervalS: number;
  portTimeoutS: number;
  lpsProfileIntervalS: number;
  lpsRadioIntervalS: number;
  lpsAppInfoIntervalS: number;
  lpsDevInfoIntervalS: number;
  lpsNetworkIntervalS: number;
  lpsAppBootInfoIntervalS: number;
  newlogGzipMaxMB: number;
  forceFallbackCounter: number;
  newlogAllowFastUpload: boolean;
  networkFallbackAnyEth: TriState;
  maintenanceMode: TriState;
  airgapMode: TriState;
}

export type TriState = 'none' | 'enabled' | 'disabled';

type IntSpec = { type: 'int'; field: keyof DeviceTimers; def: number; min: number; max: number };
type BoolSpec = { type: 'bool'; field: keyof DeviceTimers; def: boolean };
type TriSpec = { type: 'tristate'; field: keyof DeviceTimers; def: TriState };
type ItemSpec = IntSpec | BoolSpec | TriSpec;

const int = (field: keyof DeviceTimers, def: number, min: number, max: number): IntSpec => ({
  type: 'int',
  field,
  def,
  min,
  max,
});

/** The keys this simulator interprets, with EVE's default, min and max. */
export const CONFIG_ITEM_SPECS: Readonly<Record<string, ItemSpec>> = {
  'timer.config.interval': int('configIntervalS', 60, 5, 86400),
  'timer.metric.interval': int('metricIntervalS', 60, 5, 3600),
  'timer.deviceinfo.interval': int('deviceInfoIntervalS', 600, 30, U32_MAX),
  'timer.cert.interval': int('certIntervalS', 86400, 60, U32_MAX),
  'timer.location.cloud.interval': int('locationCloudIntervalS', 3600, 300, U32_MAX),
  'timer.location.app.interval': int('locationAppIntervalS', 20, 5, 3600),
  'timer.hardwarehealth.interval': int('hardwareHealthIntervalS', 43200, 21600, U32_MAX),
  'timer.ntpsources.interval': int('ntpSourcesIntervalS', 600, 60, U32_MAX),
  'timer.send.timeout': int('sendTimeoutS', 120, 0, 3600),
  'timer.dial.timeout': int('dialTimeoutS', 10, 0, 3600),
  'timer.reboot.no.network': int('rebootNoNetworkS', 604800, 120, U32_MAX),
  'timer.update.fallback.no.network': int('updateFallbackNoNetworkS', 300, 60, U32_MAX),
  'timer.test.baseimage.update': int('testBaseImageUpdateS', 600, 30, 3600),
  'timer.port.testinterval': int('portTestIntervalS', 300, 300, 3600),
  'timer.port.timeout': int('portTimeoutS', 15, 0, 3600),
  'timer.lps.profile.interval': int('lpsProfileIntervalS', 60, 3, 3600),
  'timer.lps.radio.interval': int('lpsRadioIntervalS', 5, 3, 3600),
  'timer.lps.appinfo.interval': int('lpsAppInfoIntervalS', 60, 3, 3600),
  'timer.lps.devinfo.interval': int('lpsDevInfoIntervalS', 60, 3, 3600),
  'timer.lps.network.interval': int('lpsNetworkIntervalS', 60, 3, 3600),
  'timer.lps.appbootinfo.interval': int('lpsAppBootInfoIntervalS', 60, 3, 3600),
  'newlog.gzipfiles.ondisk.maxmegabytes': int('newlogGzipMaxMB', 2048, 10, U32_MAX),
  'force.fallback.counter': int('forceFallbackCounter', 0, 0, U32_MAX),
  'newlog.allow.fastupload': { type: 'bool', field: 'newlogAllowFastUpload', def: false },
  'network.fallback.any.eth': { type: 'tristate', field: 'networkFallbackAnyEth', def: 'disabled' },
  'maintenance.mode': { type: 'tristate', field: 'maintenanceMode', def: 'none' },
  'airgap.mode': { type: 'tristate', field: 'airgapMode', def: 'none' },
};

/**
 * Real EVE keys the simulator accepts without interpreting them (so they are not reported as
 * unknown). `debug.<agent>.loglevel` and `debug.<agent>.remote.loglevel` are accepted by pattern.
 */
const OPAQUE_KNOWN_KEYS = new Set([
  'app.allow.vnc',
  'blob.download.max.retries',
  'debug.default.loglevel',
  'debug.default.remote.loglevel',
  'debug.disable.dhcp.all-ones.netmask',
  'debug.enable.console',
  'debug.enable.ssh',
  'debug.enable.usb',
  'debug.enable.vga',
  'debug.tui.loglevel',
  'edgeview.authen.jwt',
  'gogc.memory.limit.bytes',
  'gogc.percent',
  'kubevirt.drain.timeout',
  'memory-monitor.enabled',
  'msrv.prometheus.metrics.rps',
  'netdump.enable',
  'netdump.topic.maxcount',
  'netdump.topic.postonboard.interval',
  'netdump.topic.preonboard.interval',
  'netdump.downloader.with.pcap',
  'netdump.downloader.http.with.fieldvalue',
  'network.allow.wwan.app.download',
  'network.allow.wwan.baseos.download',
  'network.allow.wwan.ota',
  'network.switch.enable.arpsnoop',
  'network.local.legacy.mac.address',
  'process.cloud-init.multipart',
  'storage.apps.ignore.disk.check',
  'storage.dom0.disk.minusage.percent',
  'storage.zfs.reserved.percent',
  'sshaccess.authorizedkeys',
  'timer.boot.retry',
  'timer.defer.content.delete',
  'timer.download.retry',
  'timer.download.stalled',
  'timer.gc.download',
  'timer.gc.rkt.graceperiod',
  'timer.gc.vdisk',
  'timer.metric.diskscan.interval',
  'timer.use.config.checkpoint',
  'timer.appcontainer.stats.interval',
  'timer.vault.ready.cutoff',
  'timer.dpc.ready.cutoff',
  'wwan.query.visible.providers',
]);

export const DEFAULT_DEVICE_TIMERS: Readonly<DeviceTimers> = Object.freeze(defaultTimers());

function defaultTimers(): DeviceTimers {
  const t = {} as Record<string, unknown>;
  for (const spec of Object.values(CONFIG_ITEM_SPECS)) t[spec.field] = spec.def;
  return t as unknown as DeviceTimers;
}

/** One entry of ZInfoConfigItemStatus (info.proto ZInfoConfigItem). */
export interface ConfigItemReport {
  value?: string;
  error?: string;
}

/** Shape of info.ZInfoConfigItemStatus: what the device reports back in ZInfoDevice. */
export interface ConfigItemStatusReport {
  configItems: Record<string, ConfigItemReport>;
  unknownConfigItems: Record<string, ConfigItemReport>;
}

export interface ParsedConfigItems {
  timers: DeviceTimers;
  status: ConfigItemStatusReport;
  /** Keys whose value was rejected (the default was kept), for findings. */
  invalid: string[];
}

/**
 * Parses EdgeDevConfig.configItems like EVE: integers are decimal uint32; a value that does not
 * parse, or lies outside [min, max], is reported with an error and the default is kept; keys EVE
 * does not know land in unknownConfigItems. Later duplicates of a key win, as in EVE's loop.
 */
export function parseConfigItems(items: ReadonlyArray<{ key?: string; value?: string }> | undefined): ParsedConfigItems {
  const timers = defaultTimers();
  const status: ConfigItemStatusReport = { configItems: {}, unknownConfigItems: {} };
  const invalid = new Set<string>();
  for (const item of items ?? []) {
    const key = item.key ?? '';
    const value = item.value ?? '';
    const spec = CONFIG_ITEM_SPECS[key];
    if (!spec) {
      if (OPAQUE_KNOWN_KEYS.has(key) || isAgentLogLevelKey(key)) {
        status.configItems[key] = { value };
      } else {
        status.unknownConfigItems[key] = { value, error: `Unknown configItem ${key} value ${value}` };
      }
      continue;
    }
    const parsed = parseItemValue(spec, value);
    if (parsed.error !== undefined) {
      (timers as unknown as Record<string, unknown>)[spec.field] = spec.def;
      status.configItems[key] = { value, error: `bad value ${value} for ${key}. Error: ${parsed.error}` };
      invalid.add(key);
    } else {
      (timers as unknown as Record<string, unknown>)[spec.field] = parsed.value;
      status.configItems[key] = { value };
      invalid.delete(key);
    }
  }
  return { timers, status, invalid: [...invalid] };
}

function isAgentLogLevelKey(key: string): boolean {
  const p = key.split('.');
  return p[0] === 'debug' && ((p.length === 3 && p[2] === 'loglevel') || (p.length === 4 && p[2] === 'remote' && p[3] === 'loglevel'));
}

function parseItemValue(spec: ItemSpec, value: string): { value?: number | boolean | TriState; error?: string } {
  switch (spec.type) {
    case 'int': {
      // Go strconv.ParseUint(value, 10, 32): plain decimal digits only.
      if (!/^[0-9]+$/.test(value)) return { error: `strconv.ParseUint: parsing ${goQuote(value)}: invalid syntax` };
      const n = Number(value);
      if (n > U32_MAX) return { error: `strconv.ParseUint: parsing ${goQuote(value)}: value out of range` };
      if (n < spec.min || n > spec.max) {
        return { error: `value out of bounds. Parsed value: ${n}, Max: ${spec.max}, Min: ${spec.min}` };
      }
      return { value: n };
    }
    case 'bool': {
      if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return { value: true };
      if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return { value: false };
      return { error: `strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax` };
    }
    case 'tristate': {
      const v = value.toLowerCase();
      if (v === 'none') return { value: 'none' };
      if (v === 'enabled' || v === 'enable' || v === 'on') return { value: 'enabled' };
      if (v === 'disabled' || v === 'disable' || v === 'off') return { value: 'disabled' };
      return { error: `Bad value: ${value}` };
    }
  }
}

function goQuote(s: string): string {
  return JSON.stringify(s);
}

// ---------------------------------------------------------------------------------------------
// Periodic jitter

/** Uniform in [lo×interval, hi×interval], in ms. */
export function jitteredMs(rng: Rng, intervalS: number, lo: number, hi: number): Millis {
  return Math.round(rng.range(lo, hi) * intervalS * SEC);
}

/** Delay before the first config poll after start: immediately. */
export const FIRST_CONFIG_POLL_DELAY_MS: Millis = 0;
/** Delay before the first metrics POST after start: immediately. */
export const FIRST_METRICS_DELAY_MS: Millis = 0;

/** Next config poll: uniform in [0.3×, 1.0×] timer.config.interval. */
export function configPollDelayMs(rng: Rng, configIntervalS: number): Millis {
  return jitteredMs(rng, configIntervalS, 0.3, 1.0);
}

/** Next metrics POST: uniform in [0.3×, 1.0×] of the metrics interval in effect. */
export function metricsDelayMs(rng: Rng, metricIntervalS: number): Millis {
  return jitteredMs(rng, metricIntervalS, 0.3, 1.0);
}

/** Next forced ZInfoDevice: uniform in [0.8×, 1.2×] timer.deviceinfo.interval. */
export function deviceInfoDelayMs(rng: Rng, deviceInfoIntervalS: number): Millis {
  return jitteredMs(rng, deviceInfoIntervalS, 0.8, 1.2);
}

/** Fixed certificate re-fetch delay while the last `GET /certs` failed. */
export const CERT_RETRY_AFTER_FAILURE_MS: Millis = 120 * SEC;

/** Next `GET /certs`: 120 s after a failed fetch, else uniform in [0.3×, 1.0×] timer.cert.interval. */
export function certRefreshDelayMs(rng: Rng, certIntervalS: number, lastFetchFailed: boolean): Millis {
  return lastFetchFailed ? CERT_RETRY_AFTER_FAILURE_MS : jitteredMs(rng, certIntervalS, 0.3, 1.0);
}

/** Next ZiLocation to the controller / location POST to the LPS: uniform in [0.3×, 1.0×]. */
export function locationDelayMs(rng: Rng, intervalS: number): Millis {
  return jitteredMs(rng, intervalS, 0.3, 1.0);
}

/** Onboarding (certs/register/uuid) retry after `failures` failed rounds: 1, 2, 4 … 600 s. */
export function onboardingRetryDelayMs(failures: number): Millis {
  return expBackoffMs(failures, 1, 600);
}

/** Attestation retry timer: fixed 15 s (§5.4). */
export const ATTEST_RETRY_MS: Millis = 15 * SEC;
/** After a failed ATTEST_REQ_CERT post EVE re-triggers itself after 10 s (§5.3). */
export const ATTEST_CERT_RETRY_MS: Millis = 10 * SEC;

/** Flow-log resend after `failures` failed attempts of the same message: 1, 2, 4 … 128 s. */
export function flowlogRetryDelayMs(failures: number): Millis {
  return expBackoffMs(failures, 1, 128);
}

/** base·2^(n−1) seconds capped at maxS, for n ≥ 1 (n ≤ 0 counts as 1). */
function expBackoffMs(n: number, baseS: number, maxS: number): Millis {
  const k = Math.max(0, Math.min(30, Math.floor(n) - 1));
  return Math.min(baseS * 2 ** k, maxS) * SEC;
}

// ---------------------------------------------------------------------------------------------
// Metrics interval: a longer new value waits for one successful send

/**
 * EVE applies a shorter timer.metric.interval at once but a longer one only after the next
 * successful metrics POST, so a controller cannot silence a device by a config typo that it has no
 * chance to see the effect of.
 */
export class MetricsInterval {
  private pendingS: number | undefined;
  constructor(private currentS: number = DEFAULT_DEVICE_TIMERS.metricIntervalS) {}

  /** Interval in effect now. */
  get seconds(): number {
    return this.currentS;
  }

  /** A longer value waiting for the next successful send. */
  get pendingSeconds(): number | undefined {
    return this.pendingS;
  }

  /** New value from config. Returns true when it took effect now (reschedule the metrics timer). */
  configure(newS: number): boolean {
    if (newS === this.currentS) {
      this.pendingS = undefined;
      return false;
    }
    if (newS < this.currentS) {
      this.currentS = newS;
      this.pendingS = undefined;
      return true;
    }
    this.pendingS = newS;
    return false;
  }

  /** A metrics POST succeeded. Returns true if a pending longer value took effect now. */
  onSendSuccess(): boolean {
    if (this.pendingS === undefined) return false;
    this.currentS = this.pendingS;
    this.pendingS = undefined;
    return true;
  }
}

// ---------------------------------------------------------------------------------------------
// newlogs upload schedule (§8.3, EVE loguploader)

const LOG_FIRST_UPLOAD_S = 90;
const LOG_FIRST_EVAL_S = 1200;
const LOG_FAST_FIRST_EVAL_S = 1;
const LOG_EVAL_PERIOD_S = 1800;
const LOG_BACKOFF_MODE_S = 3600;
const LOG_BACKOFF_MAX_INTERVAL_S = 300;
const LOG_RECENT_429_S = 7200;
const LOG_FAILING_LONG_S = 1200;
const LOG_FAST_UPLOAD_INTERVAL_S = 3;

/** Base upload interval for a backlog of `filesLeft` gzip files (before 429 and jitter rules). */
export function logUploadBaseIntervalS(filesLeft: number): number {
  if (filesLeft < 5) return 90;
  if (filesLeft < 25) return 45;
  if (filesLeft < 50) return 30;
  if (filesLeft < 200) return 15;
  if (filesLeft < 1000) return 8;
  return 3;
}

/**
 * The log uploader's timing state. Each upload tick sends the oldest device file and the oldest
 * app file; the interval is re-evaluated 1200 s after start and then every 1800 s from the backlog
 * left, slowed down after 429s and randomised ±20 %. Times are clock ms.
 */
export class LogUploadSchedule {
  /** Current upload interval, seconds. */
  intervalS = LOG_FIRST_UPLOAD_S;
  private prevIntervalS = 0;
  private backoffUntil: Millis = 0;
  private last429At: Millis = -Infinity;
  private failedToSend = true;
  private failingSince: Millis;
  private consecutiveFailures = 0;
  private consecutiveSuccesses = 0;
  /** When the interval is next re-evaluated. */
  nextEvaluationAt: Millis;
  fastUpload: boolean;

  constructor(startedAt: Millis, fastUpload = false) {
    this.failingSince = startedAt; // EVE assumes "cannot send" until proven otherwise
    this.fastUpload = fastUpload;
    this.nextEvaluationAt = startedAt + (fastUpload ? LOG_FAST_FIRST_EVAL_S : LOG_FIRST_EVAL_S) * SEC;
  }

  /** Delay from now to the next upload tick. */
  uploadDelayMs(): Millis {
    return this.intervalS * SEC;
  }

  inBackoffMode(now: Millis): boolean {
    return now < this.backoffUntil;
  }

  /** Toggles newlog.allow.fastupload; EVE re-evaluates 1 s later. */
  setFastUpload(enabled: boolean, now: Millis): void {
    if (enabled === this.fastUpload) return;
    this.fastUpload = enabled;
    this.nextEvaluationAt = now + SEC;
  }

  /**
   * Re-evaluates the interval if `now` has reached nextEvaluationAt; `filesLeft` is the backlog
   * after the last upload tick (device + app files). Returns true if it ran.
   */
  maybeEvaluate(now: Millis, filesLeft: number, rng: Rng): boolean {
    if (now < this.nextEvaluationAt) return false;
    this.nextEvaluationAt = now + LOG_EVAL_PERIOD_S * SEC;
    if (this.inBackoffMode(now)) return true; // the 429 backoff owns the interval
    if (this.fastUpload) {
      this.intervalS = LOG_FAST_UPLOAD_INTERVAL_S;
      return true;
    }
    if (this.failedToSend && now - this.failingSince > LOG_FAILING_LONG_S * SEC) {
      this.intervalS = 180 + rng.int(720);
      return true;
    }
    let interval = logUploadBaseIntervalS(filesLeft);
    if (now - this.last429At < LOG_RECENT_429_S * SEC) interval = Math.max(10, interval * 2);
    if (filesLeft >= 5 && this.prevIntervalS !== 0 && this.prevIntervalS < interval) interval = this.prevIntervalS;
    this.prevIntervalS = interval;
    // ±20 %: integer seconds in [0.8×, 1.2×) as EVE computes it.
    const base = Math.floor((interval * 80) / 100);
    const span = (interval - base) * 2;
    if (span > 0) this.intervalS = base + rng.int(span);
    return true;
  }

  /** An upload answered 200/201. */
  onSuccess(): void {
    this.consecutiveFailures = 0;
    this.consecutiveSuccesses++;
    if (this.consecutiveSuccesses >= 3) this.failedToSend = false;
  }

  /** An upload got 503 or no answer ("unavailable"). */
  onUnavailable(now: Millis): void {
    this.consecutiveSuccesses = 0;
    this.consecutiveFailures++;
    if (this.consecutiveFailures >= 3 && !this.failedToSend) {
      this.failedToSend = true;
      this.failingSince = now;
    }
  }

  /** An upload got 429: back-off mode for 1 h, interval doubled up to 300 s. */
  onTooManyRequests(now: Millis): void {
    this.last429At = now;
    this.backoffUntil = now + LOG_BACKOFF_MODE_S * SEC;
    this.intervalS = Math.min(this.intervalS * 2, LOG_BACKOFF_MAX_INTERVAL_S);
  }

  /**
   * Back-off mode ends after 1 h without a new 429; EVE then re-evaluates 1 s later. Call when the
   * clock passes backoffEndsAt (or just before each tick).
   */
  get backoffEndsAt(): Millis {
    return this.backoffUntil;
  }
  onBackoffExpired(now: Millis): void {
    if (this.backoffUntil !== 0 && now >= this.backoffUntil) {
      this.backoffUntil = 0;
      this.nextEvaluationAt = now + SEC;
    }
  }

  get isFailing(): boolean {
    return this.failedToSend;
  }
}

/** Other 4xx: the same file is retried this many times, then moved aside as failed (§8.3). */
export const LOG_MAX_4XX_RETRIES = 10;
