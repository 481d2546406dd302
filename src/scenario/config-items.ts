// EVE global config items (ConfigItem key/value, eve-wire-facts §3.6) that evesim knows, with the
// ranges EVE accepts. EVE rejects an out-of-range timer and keeps its default, so a scenario asking
// for `timer.config.interval: 1` would silently run at 60 s: the loader refuses it instead.
// Values are served as decimal strings; YAML numbers and booleans are normalised here.

const U32 = 4_294_967_295;

type ItemRule =
  | { kind: 'seconds' | 'integer'; min: number; max: number }
  | { kind: 'boolean' }
  | { kind: 'enum'; values: string[] }
  | { kind: 'string' };

const sec = (min: number, max: number): ItemRule => ({ kind: 'seconds', min, max });

export const KNOWN_CONFIG_ITEMS: Readonly<Record<string, ItemRule>> = {
  'timer.config.interval': sec(5, 86_400),
  'timer.metric.interval': sec(5, 3600),
  'timer.deviceinfo.interval': sec(30, U32),
  'timer.cert.interval': sec(60, U32),
  'timer.location.cloud.interval': sec(300, U32),
  'timer.location.app.interval': sec(5, 3600),
  'timer.hardwarehealth.interval': sec(21_600, U32),
  'timer.ntpsources.interval': sec(60, U32),
  'timer.send.timeout': sec(0, 3600),
  'timer.dial.timeout': sec(0, 3600),
  'timer.reboot.no.network': sec(120, U32),
  'timer.update.fallback.no.network': sec(60, U32),
  'timer.test.baseimage.update': sec(30, 3600),
  'timer.port.testinterval': sec(300, 3600),
  'timer.port.timeout': sec(0, 3600),
  'timer.lps.profile.interval': sec(3, 3600),
  'timer.lps.radio.interval': sec(3, 3600),
  'timer.lps.appinfo.interval': sec(3, 3600),
  'timer.lps.devinfo.interval': sec(3, 3600),
  'timer.lps.network.interval': sec(3, 3600),
  'timer.lps.appbootinfo.interval': sec(3, 3600),
  'force.fallback.counter': { kind: 'integer', min: 0, max: U32 },
  'newlog.gzipfiles.ondisk.maxmegabytes': { kind: 'integer', min: 10, max: U32 },
  'newlog.allow.fastupload': { kind: 'boolean' },
  'network.fallback.any.eth': { kind: 'enum', values: ['enabled', 'disabled'] },
  'maintenance.mode': { kind: 'enum', values: ['enabled', 'disabled', 'none'] },
  'airgap.mode': { kind: 'string' },
};

export type ConfigItemCheck =
  | { ok: true; value: string; warning?: string }
  | { ok: false; message: string };

/** Normalises one config item value to the string EVE would be served, or says why it is refused. */
export function checkConfigItem(key: string, raw: string | number | boolean): ConfigItemCheck {
  const value = typeof raw === 'number' ? numberToDecimal(raw) : String(raw);
  const rule = KNOWN_CONFIG_ITEMS[key];
  if (!rule) {
    return {
      ok: true,
      value,
      warning: `"${key}" is not a config item evesim knows; it is served as is and devices treat it as unknown`,
    };
  }
  switch (rule.kind) {
    case 'seconds':
    case 'integer': {
      const unit = rule.kind === 'seconds' ? ' seconds' : '';
      if (!/^\d+$/.test(value)) {
        const what = rule.kind === 'seconds' ? 'a whole number of seconds' : 'a whole number';
        return { ok: false, message: `must be ${what} (got ${JSON.stringify(raw)})` };
      }
      const n = Number(value);
      if (n < rule.min || n > rule.max) {
        return {
          ok: false,
          message: `must be from ${rule.min} to ${rule.max}${unit}; EVE rejects ${n} and keeps its default`,
        };
      }
      return { ok: true, value: String(n) };
    }
    case 'boolean':
      if (value !== 'true' && value !== 'false') {
        return { ok: false, message: `must be true or false (got ${JSON.stringify(raw)})` };
      }
      return { ok: true, value };
    case 'enum':
      if (!rule.values.includes(value)) {
        return { ok: false, message: `must be one of ${rule.values.join(', ')} (got ${JSON.stringify(raw)})` };
      }
      return { ok: true, value };
    case 'string':
      return { ok: true, value };
  }
}

function numberToDecimal(n: number): string {
  // 1e3 in YAML is 1000; keep integers free of exponent notation, which EVE would not parse.
  return Number.isInteger(n) ? BigInt(n).toString() : String(n);
}
