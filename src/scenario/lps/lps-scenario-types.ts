// The local profile server parts of a normalised scenario: sites (one embedded LPS each, serving
// whole groups or a share of them), the radio and GNSS models of a group, and the timeline actions
// that go through an LPS. Plain data: it crosses thread boundaries with the rest of the Scenario.

import type { CellularSpec, GnssSpec } from '../../device/radio/radio-specs.js';

export type { CellularSpec, GnssSpec };

/** How devices treat 404 from their LPS: 'eve' (only location throttles) or 'spec' (the document's rule). */
export type LpsThrottleRule = 'eve' | 'spec';

/** The endpoints an embedded LPS can be told to answer 404 (src/servers/lps/lps-endpoints.ts). */
export const LPS_THROTTLE_ENDPOINTS = ['local_profile', 'radio', 'appinfo', 'devinfo', 'location', 'appbootinfo', 'network', 'signal'] as const;
export type LpsThrottleEndpoint = (typeof LPS_THROTTLE_ENDPOINTS)[number];

export interface SiteSpec {
  name: string;
  /** Groups whose devices this site's LPS serves (a group belongs to at most one site). */
  groups: string[];
  /** Share of each group's devices served, 0 < share ≤ 1, chosen by serial (the rest have no LPS). */
  share: number;
  /** Local profile the LPS serves from the start ('' = none). */
  profile: string;
  /** Radio silence the LPS asks for from the start; absent: it sends no radio configuration. */
  radioSilence?: boolean;
  /** 404 rule of the devices of this site. */
  throttleRule: LpsThrottleRule;
  /** Endpoints the LPS answers 404 from the start. */
  throttle: LpsThrottleEndpoint[];
  /** Devices are given a token that is not the LPS's: they must reject every answer with a body. */
  tokenMismatch: boolean;
}

/** What the controller needs to point a group's devices at their LPS (filled in by the runner). */
export interface GroupLpsSpec {
  /** Device API port of the group's LPS on 127.0.0.1. */
  port: number;
  /** profile_server_token put into the devices' configuration. */
  token: string;
  /** Share of the group's devices that get the LPS (by serial). */
  share: number;
}

export type LpsAppCommandName = 'restart' | 'purge';
export type LpsDeviceCommandName = 'shutdown' | 'poweroff' | 'reboot' | 'collect-info';

/** Timeline actions applied through a site's LPS admin API (and power-on, by the workers). */
export type LpsTimelineAction =
  | { atMs: number; action: 'local-profile'; site: string; profile: string }
  | { atMs: number; action: 'radio-silence'; site: string; enabled: boolean }
  | { atMs: number; action: 'lps-throttle'; site: string; endpoints: LpsThrottleEndpoint[] }
  | { atMs: number; action: 'app-command'; site?: string; group?: string; app: string; command: LpsAppCommandName }
  | { atMs: number; action: 'device-command'; site?: string; group?: string; command: LpsDeviceCommandName };

export const LPS_ACTION_NAMES = ['local-profile', 'radio-silence', 'lps-throttle', 'app-command', 'device-command'] as const;

export function isLpsAction(a: { action: string }): a is LpsTimelineAction {
  return (LPS_ACTION_NAMES as readonly string[]).includes(a.action);
}
