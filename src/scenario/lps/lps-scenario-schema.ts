// Schema parts for local profile servers: the scenario's `sites`, a group's `gnss` and `cellular`
// models, and the timeline actions that go through an LPS (plus power-on). Cross-field rules
// (known sites and groups, one site per group, site xor route, app names) are in check-lps.ts.

import { CELL_OPERATORS } from '../../device/radio/cellular-model.js';
import { DURATION_HINT } from '../parse-duration.js';
import { LPS_THROTTLE_ENDPOINTS } from './lps-scenario-types.js';

type Schema = Record<string, unknown>;

const duration: Schema = { type: 'string', format: 'duration', expect: DURATION_HINT };
const siteRef: Schema = { type: 'string', expect: 'the name of a site' };
const groupRef: Schema = { type: 'string', expect: 'the name of a group' };
const name: Schema = {
  type: 'string',
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$',
  expect: 'a name of letters, digits, "_", "." and "-"',
};
const OPERATORS = Object.keys(CELL_OPERATORS);

export const SPEED_HINT = 'a speed such as 50km/h or 13.9m/s (a plain number is m/s)';
export const SHARE_HINT = 'a share from 0 to 1 or a percentage such as 50%';

const geoPoint = (extra: Record<string, Schema> = {}): Schema => ({
  type: 'object',
  additionalProperties: false,
  required: ['latitude', 'longitude'],
  properties: {
    latitude: { type: 'number', minimum: -90, maximum: 90, expect: 'degrees from -90 to 90' },
    longitude: { type: 'number', minimum: -180, maximum: 180, expect: 'degrees from -180 to 180' },
    altitude: { type: 'number', expect: 'metres' },
    ...extra,
  },
});

const window: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['every', 'lasting'],
  properties: { every: duration, lasting: duration },
};

export const LPS_GROUP_PROPERTIES: Record<string, Schema> = {
  gnss: {
    type: 'object',
    additionalProperties: false,
    properties: {
      site: geoPoint({ jitter: { type: 'number', minimum: 0, expect: 'metres ≥ 0 around the site' } }),
      route: {
        type: 'object',
        additionalProperties: false,
        required: ['waypoints', 'speed'],
        properties: {
          waypoints: { type: 'array', minItems: 2, items: geoPoint(), expect: 'a list of at least 2 points' },
          speed: { type: ['number', 'string'], expect: SPEED_HINT },
          loop: { enum: ['back-and-forth', 'closed'] },
        },
      },
      outages: window,
    },
  },
  cellular: {
    type: 'object',
    additionalProperties: false,
    properties: {
      modems: { type: 'integer', minimum: 0, maximum: 8, expect: 'an integer from 0 to 8' },
      simSlots: { enum: [1, 2] },
      operator: { enum: OPERATORS },
      roaming: { enum: OPERATORS },
      drops: { type: ['object', 'boolean'], expect: 'false, or {every, lasting}', if: { type: 'object' }, then: window, else: { const: false } },
      radioSilenceFails: { type: 'string', minLength: 1, expect: 'the config_error text the modems report' },
    },
  },
};

const site: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'groups'],
  properties: {
    name,
    groups: { type: 'array', minItems: 1, items: groupRef, expect: 'a list of group names' },
    share: { type: ['number', 'string'], expect: SHARE_HINT },
    profile: { type: 'string' },
    radioSilence: { type: 'boolean' },
    throttleRule: { enum: ['eve', 'spec'] },
    throttle: { type: 'array', items: { enum: [...LPS_THROTTLE_ENDPOINTS] } },
    tokenMismatch: { type: 'boolean' },
  },
};

export const SITES_SCHEMA: Schema = { type: 'array', items: site, expect: 'a list of sites (one local profile server each)' };

function action(actionName: string, props: Schema, required: string[] = []): Schema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['at', 'action', ...required],
    properties: { at: duration, action: { const: actionName }, ...props },
  };
}

export const LPS_TIMELINE_ACTIONS = ['local-profile', 'radio-silence', 'lps-throttle', 'app-command', 'device-command', 'power-on'];

export const LPS_TIMELINE_ACTION_SCHEMAS: Schema[] = [
  action('local-profile', { site: siteRef, profile: { type: 'string' } }, ['site', 'profile']),
  action('radio-silence', { site: siteRef, enabled: { type: 'boolean' } }, ['site', 'enabled']),
  action('lps-throttle', { site: siteRef, endpoints: { type: 'array', items: { enum: [...LPS_THROTTLE_ENDPOINTS] } } }, ['site', 'endpoints']),
  action('app-command', { site: siteRef, group: groupRef, app: { type: 'string', minLength: 1 }, command: { enum: ['restart', 'purge'] } }, ['app', 'command']),
  action('device-command', { site: siteRef, group: groupRef, command: { enum: ['shutdown', 'poweroff', 'reboot', 'collect-info'] } }, ['command']),
  action('power-on', { group: groupRef }),
];
