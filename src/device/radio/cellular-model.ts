// Seeded cellular radios for virtual devices: modems (IMEI, model, firmware, operating state), SIM
// cards (ICCID, IMSI of the home operator's PLMN, slot), the providers a modem sees (serving one,
// roaming), and a signal (RSSI, RSRQ, RSRP, SNR) that drifts and sometimes drops. Builds what EVE
// reports: RadioStatus.cellular_status and cellular_metrics for the LPS (§11.1), ZInfoDevice
// cell_radios / sims and port wireless_status, and metrics CellularMetric (§11.4).
//
// Identity (IMEI, ICCID, IMSI, module type) is a pure function of the seed, derived again each time
// an info message needs it (rarely) instead of kept: kept, a modem's strings and objects were 12
// heap objects and about 650 B a device. Signal and drops are pure functions of (seed, time); the
// mutable state is the radio-silence flag and packet counters: a few numbers per device.

import { info, type metrics, type profile } from '../../gen/eve-types.js';
import { digits, gauss, luhnCheckDigit, modelSeed, msToOutage, smooth, unit, type OutagePlan } from './model-noise.js';
import type { Millis } from '../ports.js';

const OS = info.ZCellularOperatingState;
const CP = info.ZCellularControlProtocol;

/** Mobile operators (public MCC-MNC assignments); `cc` is the country calling code used in ICCIDs. */
export const CELL_OPERATORS = {
  'telekom-de': { mcc: '262', mnc: '01', name: 'Telekom.de', cc: '49' },
  'vodafone-de': { mcc: '262', mnc: '02', name: 'Vodafone.de', cc: '49' },
  'o2-de': { mcc: '262', mnc: '03', name: 'o2 - de', cc: '49' },
  'orange-fr': { mcc: '208', mnc: '01', name: 'Orange F', cc: '33' },
  'vodafone-uk': { mcc: '234', mnc: '15', name: 'Vodafone UK', cc: '44' },
  'att-us': { mcc: '310', mnc: '410', name: 'AT&T', cc: '1' },
  'tmobile-us': { mcc: '310', mnc: '260', name: 'T-Mobile', cc: '1' },
  'telekom-sk': { mcc: '231', mnc: '02', name: 'Telekom SK', cc: '421' },
} as const;
export type CellOperatorId = keyof typeof CELL_OPERATORS;
type Operator = (typeof CELL_OPERATORS)[CellOperatorId];

/** Modem types. Firmware strings follow each vendor's style; TACs are synthetic 8-digit prefixes. */
export const CELL_MODULES = [
  { manufacturer: 'Quectel', model: 'EG25-G', firmware: 'EG25GGBR07A08M2G', protocol: CP.Z_CELLULAR_CONTROL_PROTOCOL_QMI, tac: '86100110' },
  { manufacturer: 'Quectel', model: 'RM500Q-GL', firmware: 'RM500QGLABR11A06M4G', protocol: CP.Z_CELLULAR_CONTROL_PROTOCOL_QMI, tac: '86100220' },
  { manufacturer: 'Sierra Wireless, Incorporated', model: 'EM7565', firmware: 'SWI9X50C_01.14.03.00', protocol: CP.Z_CELLULAR_CONTROL_PROTOCOL_MBIM, tac: '35100330' },
  { manufacturer: 'Telit', model: 'LM960A18', firmware: '32.01.160', protocol: CP.Z_CELLULAR_CONTROL_PROTOCOL_MBIM, tac: '35100440' },
] as const;

export interface CellularModelOptions {
  seed: number;
  deviceIndex: number;
  /** Number of modems. Default 1. */
  modems?: number;
  /** SIM slots per modem (the first is active). Default 1. */
  simSlots?: 1 | 2;
  /** Home operator of the SIMs; default: drawn from CELL_OPERATORS by the seed. */
  operator?: CellOperatorId;
  /** Served by this other operator: roaming. Default: at home. */
  roamingOn?: CellOperatorId;
  /** Signal drops: about one per interval, lasting about the duration. Default 1 h / 40 s; null = never. */
  drops?: { meanIntervalS: number; meanDurationS: number } | null;
  /** Logical labels of the modem ports. Default wwan0, wwan1, … */
  logicalLabels?: readonly string[];
}

export interface CellularSignal {
  rssi: number;
  rsrq: number;
  rsrp: number;
  snr: number;
}

export type CellularLinkState = 'connected' | 'no-signal' | 'radio-off';

interface Modem {
  label: string;
  module: (typeof CELL_MODULES)[number];
  imei: string;
  sims: { iccid: string; imsi: string; slot: number }[];
}

/** Signal drops unless told: about one an hour, lasting about 40 s. */
const DEFAULT_DROPS = Object.freeze({ meanIntervalS: 3600, meanDurationS: 40 });

/** Plans by the spec object they were made from: the devices of a group share their group's. */
const plans = new WeakMap<object, OutagePlan>();

function outagePlan(d: { meanIntervalS: number; meanDurationS: number }, deviceIndex: number): OutagePlan {
  let plan = plans.get(d);
  if (plan !== undefined) return plan;
  if (!(d.meanIntervalS > 0) || !(d.meanDurationS >= 0) || d.meanDurationS >= d.meanIntervalS) {
    throw new Error(`cellular model of device ${deviceIndex}: drops need meanIntervalS > meanDurationS >= 0, got ${d.meanIntervalS} and ${d.meanDurationS}`);
  }
  plan = Object.freeze({ meanIntervalMs: d.meanIntervalS * 1000, meanDurationMs: d.meanDurationS * 1000 });
  plans.set(d, plan);
  return plan;
}

/** Default logical labels of modem ports, made once. */
const WWAN_LABELS = Array.from({ length: 8 }, (_, m) => `wwan${m}`);

export class CellularRadios {
  private readonly seed: number;
  private readonly nModems: number;
  private readonly simSlots: 1 | 2;
  private readonly home: Operator;
  private readonly serving: Operator;
  private readonly drops: OutagePlan | undefined;
  private silenced = false;
  // Packet counters (all modems together, split evenly in reports).
  private countedUntil: Millis | undefined;
  private rxBytes = 0;
  private txBytes = 0;

  private readonly deviceIndex: number;
  private readonly logicalLabels: readonly string[] | undefined;

  constructor(o: CellularModelOptions) {
    this.deviceIndex = o.deviceIndex;
    this.logicalLabels = o.logicalLabels;
    this.seed = modelSeed(o.seed, o.deviceIndex, 0xce11);
    const n = o.modems ?? 1;
    if (!Number.isInteger(n) || n < 0 || n > 8) throw new Error(`cellular model of device ${o.deviceIndex}: modems must be an integer 0..8, got ${n}`);
    const slots = o.simSlots ?? 1;
    if (slots !== 1 && slots !== 2) throw new Error(`cellular model of device ${o.deviceIndex}: simSlots must be 1 or 2, got ${String(slots)}`);
    const ids = Object.keys(CELL_OPERATORS) as CellOperatorId[];
    const homeId = o.operator ?? ids[Math.floor(unit(this.seed, 1, 0) * ids.length)]!;
    this.home = operator(homeId, 'operator', o.deviceIndex);
    this.serving = o.roamingOn !== undefined ? operator(o.roamingOn, 'roamingOn', o.deviceIndex) : this.home;
    if (o.drops !== null) this.drops = outagePlan(o.drops ?? DEFAULT_DROPS, o.deviceIndex);
    this.nModems = n;
    this.simSlots = slots;
  }

  /** Logical label of modem m. */
  private label(m: number): string {
    return this.logicalLabels?.[m] ?? WWAN_LABELS[m]!;
  }

  /** Long-term signal level of modem m's site, RSRP dBm. */
  private baseRsrp(m: number): number {
    return -112 + 30 * unit(this.seed, 100 + m * 16 + 8, 0);
  }

  /** Traffic rate of modem m while connected, bytes/s. */
  private rate(m: number): number {
    return 200 + 3000 * unit(this.seed, 100 + m * 16 + 9, 0);
  }

  /** Modem m's identity, derived from the seed (the same every time). */
  private modem(m: number): Modem {
    const ch = 100 + m * 16;
    const module = CELL_MODULES[Math.floor(unit(this.seed, ch, 0) * CELL_MODULES.length)]!;
    const imeiBody = module.tac + digits(this.seed, ch + 1, 6);
    const sims = [];
    for (let s = 1; s <= this.simSlots; s++) {
      const iccidBody = '89' + this.home.cc + digits(this.seed, ch + 2 + s, 17 - this.home.cc.length);
      const imsiBody = this.home.mcc + this.home.mnc;
      sims.push({
        iccid: iccidBody + luhnCheckDigit(iccidBody),
        imsi: imsiBody + digits(this.seed, ch + 5 + s, 15 - imsiBody.length),
        slot: s,
      });
    }
    return { label: this.label(m), module, imei: imeiBody + luhnCheckDigit(imeiBody), sims };
  }

  private allModems(): Modem[] {
    return Array.from({ length: this.nModems }, (_, m) => this.modem(m));
  }

  /** PLMN as EVE reports it: "MCC-MNC". */
  get homePlmn(): string {
    return `${this.home.mcc}-${this.home.mnc}`;
  }

  get roaming(): boolean {
    return this.serving !== this.home;
  }

  get modemCount(): number {
    return this.nModems;
  }

  /** Radio silence imposed (modems RADIO_OFF) or lifted. */
  setRadioSilence(on: boolean, now?: Millis): void {
    if (now !== undefined) this.count(now);
    this.silenced = on;
  }

  get radioSilenced(): boolean {
    return this.silenced;
  }

  /** Link state of modem i at time t. */
  linkState(t: Millis, i = 0): CellularLinkState {
    if (this.silenced) return 'radio-off';
    return msToOutage(this.seed, 200 + i, t, this.drops) === 0 ? 'no-signal' : 'connected';
  }

  /** Signal of modem i at time t; undefined while radio-off or without signal. */
  signal(t: Millis, i = 0): CellularSignal | undefined {
    if (!(i >= 0 && i < this.nModems) || this.linkState(t, i) !== 'connected') return undefined;
    const ch = 300 + i * 8;
    // Slow fading over minutes plus fast fluctuation; weaker just before and after a drop.
    let rsrp = this.baseRsrp(i) + 7 * smooth(this.seed, ch, t, 300_000) + 2 * gauss(this.seed, ch + 1, Math.floor(t / 5000));
    const toDrop = msToOutage(this.seed, 200 + i, t, this.drops);
    if (toDrop < 30_000) rsrp -= 15 * (1 - toDrop / 30_000);
    rsrp = clamp(Math.round(rsrp), -140, -44);
    const quality = (rsrp + 125) / 45; // 0 at the cell edge, 1 close to the tower
    const rsrq = clamp(Math.round(-19 + 14 * quality + 1.5 * smooth(this.seed, ch + 2, t, 60_000)), -20, -3);
    const rssi = clamp(Math.round(rsrp + 28 + 2 * smooth(this.seed, ch + 3, t, 45_000)), -113, -51);
    const snr = clamp(Math.round(-4 + 26 * quality + 3 * smooth(this.seed, ch + 4, t, 30_000)), -20, 30);
    return { rssi, rsrq, rsrp, snr };
  }

  /** ZCellularModuleInfo of every modem (ZInfoDevice.cell_radios, CellularStatus.module). */
  moduleInfos(t: Millis): info.ZCellularModuleInfo[] {
    return this.allModems().map((m, i) => this.moduleInfo(m, i, t));
  }

  /** ZSimcardInfo of every SIM slot (ZInfoDevice.sims). */
  simCards(): info.ZSimcardInfo[] {
    return this.allModems().flatMap((m) => this.simInfos(m));
  }

  /** RadioStatus.cellular_status. */
  cellularStatus(t: Millis): profile.CellularStatus[] {
    return this.allModems().map((m, i) => ({
      logicallabel: m.label,
      module: this.moduleInfo(m, i, t),
      sim_cards: this.simInfos(m),
      providers: this.providers(t, i),
      config_error: '',
      probe_error: '',
    }));
  }

  /** CellularMetric per modem (RadioStatus.cellular_metrics, ZMetricMsg cellular). */
  cellularMetrics(t: Millis): metrics.CellularMetric[] {
    this.count(t);
    const n = Math.max(1, this.nModems);
    return Array.from({ length: this.nModems }, (_, i) => {
      const s = this.signal(t, i);
      const rx = Math.floor(this.rxBytes / n);
      const tx = Math.floor(this.txBytes / n);
      return {
        logicallabel: this.label(i),
        signal_strength: s === undefined ? {} : { ...s },
        packet_stats: {
          rx: { totalBytes: rx, totalPackets: Math.floor(rx / 900) },
          tx: { totalBytes: tx, totalPackets: Math.floor(tx / 400) },
        },
      };
    });
  }

  /** What RadioStatus needs from the radios (LpsDeviceView.radioStatus). */
  radioStatus(t: Millis): { cellular_status: profile.CellularStatus[]; cellular_metrics: metrics.CellularMetric[] } {
    return { cellular_status: this.cellularStatus(t), cellular_metrics: this.cellularMetrics(t) };
  }

  /** ZInfoDevicePort.wireless_status of modem i. */
  wirelessStatus(t: Millis, i = 0): info.WirelessStatus {
    if (!(Number.isInteger(i) && i >= 0 && i < this.nModems)) throw new Error(`cellular model of device ${this.deviceIndex}: no modem ${i}`);
    const m = this.modem(i);
    return {
      type: info.WirelessType.WIRELESS_TYPE_CELLULAR,
      cellular: {
        cellular_module: moduleName(m),
        sim_cards: m.sims.map((s) => simName(m, s.slot)),
        providers: this.providers(t, i),
        current_rats: this.linkState(t, i) === 'connected' ? [3 /* RADIO_ACCESS_TECHNOLOGY_LTE */] : [],
      },
    };
  }

  private moduleInfo(m: Modem, i: number, t: Millis): info.ZCellularModuleInfo {
    const link = this.linkState(t, i);
    return {
      name: moduleName(m),
      imei: m.imei,
      firmware_version: m.module.firmware,
      model: m.module.model,
      operating_state:
        link === 'radio-off' ? OS.Z_CELLULAR_OPERATING_STATE_RADIO_OFF : link === 'no-signal' ? OS.Z_CELLULAR_OPERATING_STATE_ONLINE : OS.Z_CELLULAR_OPERATING_STATE_ONLINE_AND_CONNECTED,
      control_protocol: m.module.protocol,
      manufacturer: m.module.manufacturer,
    };
  }

  private simInfos(m: Modem): info.ZSimcardInfo[] {
    return m.sims.map((s) => ({
      name: simName(m, s.slot),
      cell_module_name: moduleName(m),
      imsi: s.imsi,
      iccid: s.iccid,
      state: 'present',
      slot_number: s.slot,
      slot_activated: s.slot === 1,
      type: info.SimType.SIM_TYPE_PHYSICAL,
    }));
  }

  private providers(t: Millis, i: number): info.ZCellularProvider[] {
    const link = this.linkState(t, i);
    if (link === 'radio-off') return [];
    const out: info.ZCellularProvider[] = [
      {
        plmn: `${this.serving.mcc}-${this.serving.mnc}`,
        description: this.serving.name,
        current_serving: link === 'connected',
        roaming: this.roaming,
        forbidden: false,
      },
    ];
    // Another network of the same country is visible too.
    const other = Object.values(CELL_OPERATORS).find((op) => op.mcc === this.serving.mcc && op !== this.serving);
    if (other !== undefined) {
      out.push({ plmn: `${other.mcc}-${other.mnc}`, description: other.name, current_serving: false, roaming: other !== this.home, forbidden: other !== this.home });
    }
    return out;
  }

  /** Adds traffic since the last count when connected at both ends (a coarse but monotonic model). */
  private count(t: Millis): void {
    const from = this.countedUntil;
    this.countedUntil = t;
    if (from === undefined || t <= from) return;
    for (let i = 0; i < this.nModems; i++) {
      if (this.linkState(from, i) !== 'connected' || this.linkState(t, i) !== 'connected') continue;
      const bytes = ((t - from) / 1000) * this.rate(i);
      this.rxBytes += Math.round(bytes * 0.8);
      this.txBytes += Math.round(bytes * 0.2);
    }
  }
}

function moduleName(m: Modem): string {
  return `${m.label}-modem`;
}

function simName(m: Modem, slot: number): string {
  return `${m.label}-sim${slot}`;
}

function operator(id: string, field: string, deviceIndex: number): Operator {
  const op = (CELL_OPERATORS as Record<string, Operator>)[id];
  if (op === undefined) {
    throw new Error(`cellular model of device ${deviceIndex}: ${field} ${JSON.stringify(id)} is not one of ${Object.keys(CELL_OPERATORS).join(', ')}`);
  }
  return op;
}

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}
