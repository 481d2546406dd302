// JSON schema of a scenario file as written (before defaults and unit parsing), checked with ajv.
// `additionalProperties: false` everywhere so a misspelt field is an error, not silently ignored.
// `expect` is our own annotation: the loader words an error on that field as "must be <expect>".
// Cross-field rules (unknown group in the timeline, threshold syntax, config item ranges, ...) are
// checked by the loader after this schema. Capabilities (capabilities.ts) add their fragments:
// group fields, top-level sections and timeline actions.

import { DURATION_HINT } from './parse-duration.js';
import { RATE_HINT } from './parse-rate.js';
import { SCENARIO_CAPABILITIES } from './capabilities.js';
import type { CapabilitySchema, SchemaFragment as Schema } from './scenario-capability.js';

/** The capabilities' fields of one kind, merged in registry order (group fields: those placed `after`). */
function fromCapabilities(kind: keyof Pick<CapabilitySchema, 'groupProperties' | 'scenarioProperties'>, after?: 'count' | 'core'): Record<string, Schema> {
  const parts = SCENARIO_CAPABILITIES.filter((c) => after === undefined || (c.groupFieldsAfter ?? 'core') === after);
  return Object.assign({}, ...parts.map((c) => c.schema?.[kind] ?? {})) as Record<string, Schema>;
}

const duration: Schema = { type: 'string', format: 'duration', expect: DURATION_HINT };
const rate: Schema = {
  type: ['string', 'number'],
  format: 'rate',
  exclusiveMinimum: 0,
  expect: RATE_HINT,
};
const nonNegative: Schema = { type: 'number', minimum: 0, expect: 'a number ≥ 0' };
const positiveInt: Schema = { type: 'integer', minimum: 1, expect: 'an integer ≥ 1' };
const name: Schema = {
  type: 'string',
  pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$',
  expect: 'a name of letters, digits, "_", "." and "-"',
};
const groupRef: Schema = { type: 'string', expect: 'the name of a group' };

const app: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name,
    activate: { type: 'boolean' },
    profiles: { type: 'array', items: { type: 'string' } },
    logLinesPerSec: nonNegative,
    flowsPerMessage: { type: 'integer', minimum: 0, expect: 'an integer ≥ 0' },
  },
};

const group: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'count'],
  properties: {
    name,
    count: positiveInt,
    ...fromCapabilities('groupProperties', 'count'),
    eveVersion: { type: 'string', minLength: 1, expect: 'an EVE release string such as 14.5.2-kvm-amd64' },
    preRegistered: { type: 'boolean' },
    logs: {
      type: 'object',
      additionalProperties: false,
      properties: {
        format: { enum: ['newlogs', 'legacy'] },
        linesPerSec: nonNegative,
        // EVE's newlog.gzipfiles.ondisk.maxmegabytes, with EVE's accepted range.
        quotaMB: { type: 'integer', minimum: 10, maximum: 4294967295, expect: 'an integer number of megabytes, 10 to 4294967295 (EVE accepts no less than 10)' },
      },
    },
    flowlog: { type: 'object', additionalProperties: false, properties: { interval: duration } },
    apps: { type: 'array', items: app },
    configItems: {
      type: 'object',
      additionalProperties: { type: ['string', 'number', 'boolean'], expect: 'a string, number or boolean' },
    },
    globalProfile: { type: 'string' },
    hardware: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ncpu: positiveInt,
        memoryMB: positiveInt,
        storageMB: positiveInt,
        model: { type: 'string' },
        manufacturer: { type: 'string' },
      },
    },
    appStep: duration,
    ...fromCapabilities('groupProperties', 'core'),
  },
};

const externalTarget: Schema = {
  type: 'object',
  additionalProperties: false,
  // rootCa may be left out with insecureSkipVerify: true (check-scenario.ts).
  required: ['url', 'onboardCert', 'onboardKey'],
  properties: {
    url: { type: 'string', expect: 'a URL such as https://127.0.0.1:8443' },
    rootCa: { type: 'string', expect: 'the path of the controller root CA PEM file' },
    onboardCert: { type: 'string', expect: 'the path of the onboarding certificate PEM file' },
    onboardKey: { type: 'string', expect: 'the path of the onboarding private key PEM file' },
    v1Url: { type: 'string', expect: 'the URL of the controller API v1 (mutual TLS) listener, when not the same as url' },
    insecureSkipVerify: { type: 'boolean' },
  },
};

// A threshold entry: the expression, or a map that says the threshold is required (it fails
// instead of being "not checked" when the target cannot provide its figures).
const THRESHOLD_ENTRY = 'a threshold expression such as "config.p99 < 200ms" or a map { threshold: <expression>, required: true, abortOnFail: true, delayAbortEval: 30s }';
const threshold: Schema = {
  type: ['string', 'object'],
  expect: THRESHOLD_ENTRY,
  if: { type: 'string' },
  then: { type: 'string' },
  else: {
    type: 'object',
    additionalProperties: false,
    required: ['threshold'],
    properties: {
      threshold: { type: 'string', expect: 'a threshold expression such as "config.p99 < 200ms"' },
      required: { type: 'boolean', expect: 'true or false' },
      abortOnFail: { type: 'boolean', expect: 'true or false' },
      delayAbortEval: { type: 'string', expect: 'a duration such as 30s' },
    },
  },
};

export const TIMELINE_ACTIONS = [
  'maintenance',
  'config-item',
  'app-activate',
  'reboot',
  'controller-epoch',
  ...SCENARIO_CAPABILITIES.flatMap((c) => c.schema?.timelineActionNames ?? []),
];

function action(name: string, props: Schema, required: string[] = []): Schema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['at', 'action', ...required],
    properties: { at: duration, action: { const: name }, ...props },
  };
}

const timelineAction: Schema = {
  type: 'object',
  required: ['action'],
  properties: { action: { type: 'string', expect: `one of ${TIMELINE_ACTIONS.join(', ')}` } },
  discriminator: { propertyName: 'action' },
  oneOf: [
    action('maintenance', { enabled: { type: 'boolean' } }, ['enabled']),
    action(
      'config-item',
      {
        group: groupRef,
        key: { type: 'string', minLength: 1 },
        value: { type: ['string', 'number', 'boolean'], expect: 'a string, number or boolean' },
      },
      ['key', 'value'],
    ),
    action('app-activate', { group: groupRef, app: { type: 'string' }, activate: { type: 'boolean' } }, [
      'app',
      'activate',
    ]),
    action('reboot', { group: groupRef }),
    action('controller-epoch', { group: groupRef }),
    ...SCENARIO_CAPABILITIES.flatMap((c) => c.schema?.timelineActionSchemas ?? []),
  ],
};

export const SCENARIO_SCHEMA: Schema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  expect: 'a map of scenario fields (name, duration, groups, ...)',
  additionalProperties: false,
  required: ['duration', 'groups'],
  properties: {
    name: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    seed: { type: 'integer', minimum: 0, maximum: 4294967295, expect: 'an integer from 0 to 4294967295' },
    duration,
    gracefulStop: duration,
    target: {
      type: ['string', 'object'],
      expect: '"embedded" or a map with url, rootCa, onboardCert and onboardKey',
      if: { type: 'string' },
      then: { const: 'embedded', expect: '"embedded" or a map with url, rootCa, onboardCert and onboardKey' },
      else: externalTarget,
    },
    groups: { type: 'array', minItems: 1, items: group, expect: 'a list of at least one device group' },
    arrival: {
      type: 'object',
      additionalProperties: false,
      required: ['model'],
      properties: {
        model: { enum: ['all-at-once', 'uniform', 'poisson'] },
        rate,
        over: duration,
      },
    },
    timeline: { type: 'array', items: timelineAction },
    thresholds: { type: 'array', items: threshold },
    ...fromCapabilities('scenarioProperties'),
  },
};
