import { describe, expect, it } from 'vitest';
import { info } from '../src/gen/eve-types.js';
import { Msg } from '../src/protocol/messages.js';
import { CellularRadios, CELL_OPERATORS } from '../src/device/radio/cellular-model.js';
import { luhnCheckDigit, luhnValid } from '../src/device/radio/model-noise.js';

const OS = info.ZCellularOperatingState;

describe('Luhn', () => {
  it('computes check digits of known numbers', () => {
    expect(luhnCheckDigit('7992739871')).toBe(3); // the classic example
    expect(luhnValid('79927398713')).toBe(true);
    expect(luhnValid('79927398710')).toBe(false);
    expect(luhnValid('490154203237518')).toBe(true); // a well-known sample IMEI
    expect(luhnValid('8944500102198304826')).toBe(true); // a 19-digit sample ICCID
  });
});

describe('cellular radio model', () => {
  it('has valid, deterministic identities: IMEI and ICCID with Luhn, IMSI of the home PLMN', () => {
    for (let i = 0; i < 50; i++) {
      const r = new CellularRadios({ seed: 11, deviceIndex: i, modems: 2, simSlots: 2 });
      const mods = r.moduleInfos(0);
      expect(mods).toHaveLength(2);
      for (const m of mods) {
        expect(m.imei).toMatch(/^[0-9]{15}$/);
        expect(luhnValid(m.imei!)).toBe(true);
        expect(m.model).toBeTruthy();
        expect(m.firmware_version).toBeTruthy();
        expect(m.manufacturer).toBeTruthy();
      }
      const sims = r.simCards();
      expect(sims).toHaveLength(4);
      const plmn = r.homePlmn.replace('-', '');
      for (const s of sims) {
        expect(s.iccid).toMatch(/^89[0-9]{18}$/);
        expect(luhnValid(s.iccid!)).toBe(true);
        expect(s.imsi).toMatch(/^[0-9]{15}$/);
        expect(s.imsi!.startsWith(plmn)).toBe(true);
        expect(s.type).toBe(info.SimType.SIM_TYPE_PHYSICAL);
      }
      expect(sims.map((s) => [s.slot_number, s.slot_activated])).toEqual([
        [1, true],
        [2, false],
        [1, true],
        [2, false],
      ]);
    }
    const a = new CellularRadios({ seed: 11, deviceIndex: 3 });
    const b = new CellularRadios({ seed: 11, deviceIndex: 3 });
    const c = new CellularRadios({ seed: 12, deviceIndex: 3 });
    expect(a.moduleInfos(5000)).toEqual(b.moduleInfos(5000));
    expect(a.simCards()).toEqual(b.simCards());
    expect(a.cellularStatus(77_000)).toEqual(b.cellularStatus(77_000));
    expect(a.moduleInfos(0)[0]!.imei).not.toBe(c.moduleInfos(0)[0]!.imei);
  });

  it('derives a modem identity from the seed each time, the same values whatever was asked before (pinned)', () => {
    // Devices of a resumed fleet, and of another evesim version, must keep their IMEIs and SIMs.
    const fresh = (): CellularRadios => new CellularRadios({ seed: 7, deviceIndex: 2, modems: 2, simSlots: 2 });
    const pinned = {
      imeis: [
        ['351003307386325', 'EM7565'],
        ['351004406204393', 'LM960A18'],
      ],
      sims: [
        ['wwan0-sim1', '89143102740385927470', '310410881524455'],
        ['wwan0-sim2', '89131922362112651324', '310410679506853'],
        ['wwan1-sim1', '89182935185943841089', '310410667610244'],
        ['wwan1-sim2', '89164451067427006060', '310410794073609'],
      ],
    };
    const a = fresh();
    expect(a.moduleInfos(0).map((m) => [m.imei, m.model])).toEqual(pinned.imeis);
    expect(a.simCards().map((s) => [s.name, s.iccid, s.imsi])).toEqual(pinned.sims);
    // After metrics, silence and hours of signal, the identity reads the same.
    a.cellularMetrics(3_600_000);
    a.setRadioSilence(true, 3_700_000);
    a.setRadioSilence(false, 3_800_000);
    for (let t = 0; t < 10; t++) a.signal(t * 600_000, t % 2);
    expect(a.moduleInfos(9_000_000).map((m) => [m.imei, m.model])).toEqual(pinned.imeis);
    expect(a.simCards().map((s) => [s.name, s.iccid, s.imsi])).toEqual(pinned.sims);
    expect(a.wirelessStatus(0, 1).cellular?.sim_cards).toEqual(['wwan1-sim1', 'wwan1-sim2']);
    expect(() => a.wirelessStatus(0, 2)).toThrow(/device 2: no modem 2/);
  });

  it('has a signal that drifts within physical ranges and drops now and then', () => {
    const r = new CellularRadios({ seed: 4, deviceIndex: 9, operator: 'vodafone-de', drops: { meanIntervalS: 900, meanDurationS: 60 } });
    const rsrps = new Set<number>();
    let dropped = 0;
    let n = 0;
    for (let t = 0; t < 12 * 3_600_000; t += 10_000) {
      n++;
      const s = r.signal(t);
      if (s === undefined) {
        dropped++;
        expect(r.linkState(t)).toBe('no-signal');
        expect(r.moduleInfos(t)[0]!.operating_state).toBe(OS.Z_CELLULAR_OPERATING_STATE_ONLINE);
        continue;
      }
      rsrps.add(s.rsrp);
      expect(s.rsrp).toBeGreaterThanOrEqual(-140);
      expect(s.rsrp).toBeLessThanOrEqual(-44);
      expect(s.rsrq).toBeGreaterThanOrEqual(-20);
      expect(s.rsrq).toBeLessThanOrEqual(-3);
      expect(s.rssi).toBeGreaterThanOrEqual(-113);
      expect(s.rssi).toBeLessThanOrEqual(-51);
      expect(s.snr).toBeGreaterThanOrEqual(-20);
      expect(s.snr).toBeLessThanOrEqual(30);
      expect(r.moduleInfos(t)[0]!.operating_state).toBe(OS.Z_CELLULAR_OPERATING_STATE_ONLINE_AND_CONNECTED);
    }
    expect(rsrps.size).toBeGreaterThan(15);
    expect(dropped / n).toBeGreaterThan(0.02);
    expect(dropped / n).toBeLessThan(0.15);
    const never = new CellularRadios({ seed: 4, deviceIndex: 9, drops: null });
    for (let t = 0; t < 3_600_000; t += 10_000) expect(never.signal(t)).toBeDefined();
  });

  it('goes RADIO_OFF under radio silence and back', () => {
    const r = new CellularRadios({ seed: 1, deviceIndex: 0, drops: null });
    r.setRadioSilence(true, 1000);
    expect(r.moduleInfos(2000)[0]!.operating_state).toBe(OS.Z_CELLULAR_OPERATING_STATE_RADIO_OFF);
    expect(r.signal(2000)).toBeUndefined();
    expect(r.cellularStatus(2000)[0]!.providers).toEqual([]);
    expect(r.cellularMetrics(2000)[0]!.signal_strength).toEqual({});
    r.setRadioSilence(false, 3000);
    expect(r.moduleInfos(4000)[0]!.operating_state).toBe(OS.Z_CELLULAR_OPERATING_STATE_ONLINE_AND_CONNECTED);
    expect(r.signal(4000)).toBeDefined();
  });

  it('reports providers with the serving PLMN and roaming', () => {
    const home = new CellularRadios({ seed: 1, deviceIndex: 0, operator: 'telekom-de', drops: null });
    const p = home.cellularStatus(0)[0]!.providers!;
    expect(p[0]).toEqual({ plmn: '262-01', description: CELL_OPERATORS['telekom-de'].name, current_serving: true, roaming: false, forbidden: false });
    expect(p.length).toBeGreaterThan(1);
    const away = new CellularRadios({ seed: 1, deviceIndex: 0, operator: 'telekom-de', roamingOn: 'orange-fr', drops: null });
    expect(away.roaming).toBe(true);
    expect(away.cellularStatus(0)[0]!.providers![0]).toMatchObject({ plmn: '208-01', current_serving: true, roaming: true });
    expect(away.simCards()[0]!.imsi!.startsWith('26201')).toBe(true);
    expect(() => new CellularRadios({ seed: 1, deviceIndex: 5, operator: 'nope' as 'telekom-de' })).toThrow(/device 5: operator "nope" is not one of/);
  });

  it('counts packets monotonically while connected', () => {
    const r = new CellularRadios({ seed: 2, deviceIndex: 0, drops: null });
    const a = r.cellularMetrics(0)[0]!.packet_stats!;
    const b = r.cellularMetrics(60_000)[0]!.packet_stats!;
    const c = r.cellularMetrics(120_000)[0]!.packet_stats!;
    expect(b.rx!.totalBytes!).toBeGreaterThan(a.rx!.totalBytes ?? 0);
    expect(c.rx!.totalBytes!).toBeGreaterThan(b.rx!.totalBytes!);
    expect(c.tx!.totalBytes!).toBeGreaterThan(b.tx!.totalBytes!);
  });

  it('builds a RadioStatus that encodes and decodes with Msg.RadioStatus, and port wireless status', () => {
    const r = new CellularRadios({ seed: 8, deviceIndex: 1, modems: 2, drops: null });
    const status = { radio_silence: false, config_error: '', ...r.radioStatus(30_000) };
    const back = Msg.RadioStatus.decode(Msg.RadioStatus.encode(status));
    expect(back.cellular_status).toHaveLength(2);
    expect(back.cellular_status![0]!.logicallabel).toBe('wwan0');
    expect(back.cellular_status![1]!.logicallabel).toBe('wwan1');
    expect(back.cellular_status![0]!.module!.imei).toBe(status.cellular_status[0]!.module!.imei);
    expect(back.cellular_status![0]!.sim_cards![0]!.iccid).toBe(status.cellular_status[0]!.sim_cards![0]!.iccid);
    expect(back.cellular_metrics![0]!.signal_strength!.rsrp).toBe(status.cellular_metrics[0]!.signal_strength!.rsrp);
    const json = Msg.RadioStatus.toJSON(back);
    expect(JSON.stringify(json)).toContain('Z_CELLULAR_OPERATING_STATE_ONLINE_AND_CONNECTED');
    const ws = r.wirelessStatus(30_000, 1);
    expect(ws.type).toBe(info.WirelessType.WIRELESS_TYPE_CELLULAR);
    expect(ws.cellular!.cellular_module).toBe('wwan1-modem');
    const dev = Msg.ZInfoDevice.decode(Msg.ZInfoDevice.encode({ cell_radios: r.moduleInfos(0), sims: r.simCards() }));
    expect(dev.cell_radios).toHaveLength(2);
    expect(dev.sims).toHaveLength(2);
  });
});
