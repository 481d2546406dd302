// The scenario's sites at run time: one embedded local profile server per site, each in a thread
// of its own (startLpsInThread), with its state file under the run's state directory so command
// requests survive a restart of the LPS. The runner gives the sites' ports and tokens to the
// groups they serve (GroupSpec.lps, which the embedded controller turns into each device's
// local_profile_server and profile_server_token), applies the LPS timeline actions through the
// sites' admin APIs, and reads back every command's issue and completion time at the end.

import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { LpsThrottleEndpoint, LpsTimelineAction, SiteSpec } from '../../scenario/lps/lps-scenario-types.js';
import { isLpsAction } from '../../scenario/lps/lps-scenario-types.js';
import { inLpsShare } from '../../scenario/lps/lps-share.js';
import type { GroupSpec, Scenario } from '../../scenario/scenario-types.js';
import { LpsAdmin, type LpsCommandRecord, type LpsDevices } from './lps-admin.js';

/** What the runner needs of a started embedded LPS (startLpsInThread's result fits). */
export interface EmbeddedLps {
  /** host:port of the device API. */
  address: string;
  adminUrl: string;
  token: string;
  stop(): Promise<void>;
}

/** The subset of the LPS options the runner sets (src/servers/lps/lps-options.ts). */
export interface EmbeddedLpsOptions {
  siteName: string;
  stateFile: string;
  profile: string;
  radioSilence?: boolean;
  throttle: LpsThrottleEndpoint[];
}

export type StartEmbeddedLps = (opts: EmbeddedLpsOptions) => Promise<EmbeddedLps>;

/** Where the runner finds the devices of a group (the embedded controller's admin API). */
export interface DeviceDirectory {
  devices?(page: { offset?: number; limit?: number }): Promise<{ total: number; devices: Record<string, unknown>[] }>;
}

/** One site while the run lasts. */
export interface RunningSite {
  spec: SiteSpec;
  lps: EmbeddedLps;
  port: number;
  admin: LpsAdmin;
}

/** Every command the sites were asked for, with issue and completion times (LPS clock). */
export interface SiteCommand extends LpsCommandRecord {
  site: string;
}

const DIRECTORY_PAGE = 5000;

export class LpsSites {
  private constructor(readonly sites: RunningSite[]) {}

  /** Starts one LPS per site. A failure stops the ones already started and names the site. */
  static async start(sites: readonly SiteSpec[], stateDir: string, start: StartEmbeddedLps): Promise<LpsSites> {
    const running: RunningSite[] = [];
    try {
      for (const spec of sites) {
        const stateFile = join(stateDir, 'lps', `${spec.name}.json`);
        // A run starts with no commands: the state file is for restarts of the LPS within a run.
        rmSync(stateFile, { force: true });
        let lps: EmbeddedLps;
        try {
          lps = await start({
            siteName: spec.name,
            stateFile,
            profile: spec.profile,
            ...(spec.radioSilence !== undefined ? { radioSilence: spec.radioSilence } : {}),
            throttle: [...spec.throttle],
          });
        } catch (e) {
          throw new Error(`site ${spec.name}: the local profile server did not start: ${(e as Error).message}`);
        }
        const port = Number(/:(\d+)$/.exec(lps.address)?.[1]);
        running.push({ spec, lps, port, admin: new LpsAdmin(spec.name, lps.adminUrl) });
        if (!(port > 0)) throw new Error(`site ${spec.name}: LPS address ${lps.address} has no port`);
      }
    } catch (e) {
      await new LpsSites(running).stop();
      throw e;
    }
    return new LpsSites(running);
  }

  /** The groups with GroupSpec.lps set for those a site serves (what the controller is told). */
  groups(groups: readonly GroupSpec[]): GroupSpec[] {
    return groups.map((g) => {
      const site = this.siteOfGroup(g.name);
      if (site === undefined) return g;
      // tokenMismatch: the devices are told another token, so they must refuse every answer.
      const token = site.spec.tokenMismatch ? `not-${site.lps.token}` : site.lps.token;
      return { ...g, lps: { port: site.port, token, share: site.spec.share } };
    });
  }

  describe(): { name: string; address: string; adminUrl: string; groups: string[] }[] {
    return this.sites.map((s) => ({ name: s.spec.name, address: s.lps.address, adminUrl: s.lps.adminUrl, groups: [...s.spec.groups] }));
  }

  /**
   * Schedules the scenario's LPS actions at their times from `startAtMs`; they run one after
   * another in timeline order. Failures are reported through `err`, never thrown.
   */
  scheduleTimeline(scenario: Pick<Scenario, 'timeline'>, startAtMs: number, directory: DeviceDirectory | undefined, err: (t: string) => void): NodeJS.Timeout[] {
    let chain = Promise.resolve();
    return scenario.timeline.filter(isLpsAction).map((action) =>
      setTimeout(
        () => {
          chain = chain
            .then(() => this.apply(action, directory))
            .catch((e: unknown) => err(`evesim: timeline action "${action.action}" at ${action.atMs} ms failed: ${(e as Error).message}\n`));
        },
        Math.max(0, startAtMs + action.atMs - Date.now()),
      ),
    );
  }

  /** Applies one LPS timeline action. */
  async apply(action: LpsTimelineAction, directory?: DeviceDirectory): Promise<void> {
    switch (action.action) {
      case 'local-profile':
        await this.site(action.site).admin.setProfile(action.profile);
        return;
      case 'radio-silence':
        await this.site(action.site).admin.setRadioSilence(action.enabled);
        return;
      case 'lps-throttle':
        await this.site(action.site).admin.setThrottle(action.endpoints);
        return;
      case 'app-command':
        for (const [site, devices] of await this.targets(action, directory)) await site.admin.appCommand(devices, { name: action.app }, action.command);
        return;
      case 'device-command':
        for (const [site, devices] of await this.targets(action, directory)) await site.admin.deviceCommand(devices, action.command);
        return;
    }
  }

  /** Every command of every site with its issue and completion time. */
  async commands(): Promise<SiteCommand[]> {
    const out: SiteCommand[] = [];
    for (const s of this.sites) for (const c of await s.admin.commands()) out.push({ ...c, site: s.spec.name });
    return out;
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.sites.map(async (s) => {
      await s.admin.close();
      await s.lps.stop();
    }));
  }

  private site(name: string): RunningSite {
    const s = this.sites.find((x) => x.spec.name === name);
    if (s === undefined) throw new Error(`no site named "${name}" (sites: ${this.sites.map((x) => x.spec.name).join(', ')})`);
    return s;
  }

  private siteOfGroup(group: string): RunningSite | undefined {
    return this.sites.find((s) => s.spec.groups.includes(group));
  }

  /**
   * The devices a command action addresses, per site: the registered devices of the group (or of
   * every group of the site) that the site serves, from the controller; without a directory,
   * every device the site has heard from.
   */
  private async targets(action: Extract<LpsTimelineAction, { action: 'app-command' | 'device-command' }>, directory?: DeviceDirectory): Promise<[RunningSite, LpsDevices][]> {
    const sites = action.site !== undefined ? [this.site(action.site)] : [this.siteOfGroup(action.group!)].filter((s): s is RunningSite => s !== undefined);
    if (sites.length === 0) throw new Error(`group "${action.group}" is not served by any site`);
    if (directory?.devices === undefined) return sites.map((s) => [s, 'all']);
    const registered = await listDevices(directory);
    const out: [RunningSite, LpsDevices][] = [];
    for (const s of sites) {
      const groups = action.group !== undefined ? [action.group] : s.spec.groups;
      const uuids = registered.filter((d) => groups.includes(d.group) && inLpsShare(d.serial, s.spec.share)).map((d) => d.uuid);
      if (uuids.length > 0) out.push([s, uuids]);
    }
    return out;
  }
}

async function listDevices(directory: DeviceDirectory): Promise<{ uuid: string; serial: string; group: string }[]> {
  const out: { uuid: string; serial: string; group: string }[] = [];
  for (let offset = 0; ; offset += DIRECTORY_PAGE) {
    const page = await directory.devices!({ offset, limit: DIRECTORY_PAGE });
    for (const d of page.devices) {
      if (typeof d.uuid === 'string' && typeof d.serial === 'string' && typeof d.group === 'string') out.push({ uuid: d.uuid, serial: d.serial, group: d.group });
    }
    if (page.devices.length < DIRECTORY_PAGE || offset + DIRECTORY_PAGE >= page.total) return out;
  }
}

/** The LPS when the caller passes none: a lazy import keeps the runner below the servers layer. */
export async function defaultStartLps(opts: EmbeddedLpsOptions): Promise<EmbeddedLps> {
  const modulePath = '../../servers/lps/lps-thread.js';
  const mod = (await import(modulePath)) as { startLpsInThread: StartEmbeddedLps };
  return mod.startLpsInThread(opts);
}
