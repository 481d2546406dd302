// Holds our proto/ files to EVE's own schema (test/vectors/eve-api-schema.json, from
// lf-edge/eve-api by protoc, see test/vectors/README.md): every message, field and enum value
// we define must exist in EVE with the same number, name, type, label and oneof. The only
// exceptions are the few additions of newer EVE releases in ALLOWED below.
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { loadProtoRoot } from '../src/protocol/proto-root.js';
import {
  type AllowedDifference,
  type Difference,
  type EveSchema,
  diffProtoAgainstSchema,
  mapEntryName,
  subjectKey,
} from './proto-schema-diff.js';
import { vectorPath } from './vectors-dir.js';

const schema = JSON.parse(readFileSync(vectorPath('eve-api-schema.json'), 'utf8')) as EveSchema;

const NEWER_EVE = "EVE releases newer than the schema's eve-api commit add these; test/vectors/README.md";

/** The only differences allowed, each of which must still be in our protos (else the entry is stale). */
const ALLOWED: AllowedDifference[] = [
  {
    subject: {
      kind: 'enum-value',
      enumName: 'org.lfedge.eve.attest.AttestVersionType',
      value: 'ATTEST_VERSION_TYPE_EVE_ORIGIN',
      number: 3,
    },
    reason: NEWER_EVE,
  },
  {
    subject: {
      kind: 'enum-value',
      enumName: 'org.lfedge.eve.info.APICapability',
      value: 'API_CAPABILITY_APP_INSTANCE_NET_INTERFACE_CHANGE',
      number: 22,
    },
    reason: NEWER_EVE,
  },
  { subject: { kind: 'field', message: 'org.lfedge.eve.info.ZInfoStorage', number: 5 }, reason: NEWER_EVE },
  { subject: { kind: 'field', message: 'org.lfedge.eve.info.ZInfoStorage', number: 6 }, reason: NEWER_EVE },
  { subject: { kind: 'field', message: 'org.lfedge.eve.info.ZInfoStorage', number: 7 }, reason: NEWER_EVE },
];

const allowedKeys = new Set(ALLOWED.map((a) => subjectKey(a.subject)));
const notAllowed = (diffs: Difference[]): string[] =>
  diffs.filter((d) => !allowedKeys.has(subjectKey(d.subject))).map((d) => d.text);

const ourRoot = loadProtoRoot();
const ourDifferences = diffProtoAgainstSchema(ourRoot, schema);

/** Differences a changed copy of our protos has beyond what the unchanged ones have. */
function newDifferences(root: protobuf.Root): Difference[] {
  const before = new Set(ourDifferences.map((d) => d.text));
  return diffProtoAgainstSchema(root, schema).filter((d) => !before.has(d.text));
}

describe("our protos against EVE's schema", () => {
  it('the schema file is the whole EVE API', () => {
    expect(Object.keys(schema.messages).length).toBeGreaterThan(300);
    expect(Object.keys(schema.enums).length).toBeGreaterThan(100);
    expect(schema.messages['org.lfedge.eve.config.EdgeDevConfig']?.fields['1']?.name).toBe('id');
  });

  it('every message, field and enum value agrees with EVE, except the allow-list', () => {
    const unexpected = notAllowed(ourDifferences);
    expect(unexpected, `${unexpected.length} disagreements with EVE's schema:\n${unexpected.join('\n')}`).toEqual([]);
  });

  it.each(ALLOWED.map((a) => [subjectKey(a.subject), a] as const))(
    'allow-list entry %s is still in our protos and still differs',
    (_key, allowed) => {
      const matching = ourDifferences.filter((d) => subjectKey(d.subject) === subjectKey(allowed.subject));
      expect(matching, `no difference matches ${subjectKey(allowed.subject)} (${allowed.reason}); drop the entry`).toHaveLength(1);
      const s = allowed.subject;
      if (s.kind === 'enum-value') expect(ourRoot.lookupEnum(s.enumName).values[s.value]).toBe(s.number);
      if (s.kind === 'field') expect(ourRoot.lookupType(s.message).fieldsById[s.number]).toBeDefined();
    },
  );
});

describe('the comparison itself', () => {
  it('reports a misnumbered field with its message, name and number', () => {
    const root = loadProtoRoot();
    const type = root.lookupType('org.lfedge.eve.config.EdgeDevConfig');
    const manufacturer = type.fields['manufacturer']!;
    expect(manufacturer.id).toBe(14);
    type.remove(manufacturer);
    type.add(new protobuf.Field('manufacturer', 23, 'string'));
    root.resolveAll();
    expect(newDifferences(root)).toEqual([
      {
        subject: { kind: 'field', message: 'org.lfedge.eve.config.EdgeDevConfig', number: 23 },
        text: `org.lfedge.eve.config.EdgeDevConfig field 23 "manufacturer": EVE's schema has no field 23`,
      },
    ]);
  });

  it('reports a field given the number of another EVE field by name', () => {
    const root = loadProtoRoot();
    const type = root.lookupType('org.lfedge.eve.config.EdgeDevConfig');
    type.remove(type.fields['productName']!);
    type.remove(type.fields['manufacturer']!);
    type.add(new protobuf.Field('manufacturer', 15, 'string'));
    root.resolveAll();
    expect(newDifferences(root).map((d) => d.text)).toEqual([
      `org.lfedge.eve.config.EdgeDevConfig field 15 "manufacturer": name, EVE has "productName"`,
    ]);
  });

  it('reports a wrong enum value number', () => {
    const root = loadProtoRoot();
    const en = root.lookupEnum('org.lfedge.eve.common.HashAlgorithm');
    expect(en.values['HASH_ALGORITHM_SHA256_32BYTES']).toBe(2);
    en.remove('HASH_ALGORITHM_SHA256_32BYTES');
    en.add('HASH_ALGORITHM_SHA256_32BYTES', 7);
    expect(newDifferences(root)).toEqual([
      {
        subject: {
          kind: 'enum-value',
          enumName: 'org.lfedge.eve.common.HashAlgorithm',
          value: 'HASH_ALGORITHM_SHA256_32BYTES',
          number: 7,
        },
        text: 'enum org.lfedge.eve.common.HashAlgorithm value HASH_ALGORITHM_SHA256_32BYTES = 7, EVE has HASH_ALGORITHM_SHA256_32BYTES = 2',
      },
    ]);
  });

  it('reports a message and an enum EVE does not have', () => {
    const root = loadProtoRoot();
    const config = root.lookup('org.lfedge.eve.config') as protobuf.Namespace;
    config.add(new protobuf.Type('NotAnEveMessage').add(new protobuf.Field('x', 1, 'string')));
    config.add(new protobuf.Enum('NotAnEveEnum', { NOT_AN_EVE_ENUM_UNSPECIFIED: 0 }));
    root.resolveAll();
    expect(newDifferences(root).map((d) => d.text).sort()).toEqual([
      "enum org.lfedge.eve.config.NotAnEveEnum is not in EVE's schema",
      "message org.lfedge.eve.config.NotAnEveMessage is not in EVE's schema",
    ]);
  });

  // A map, a oneof, proto3 optional and a repeated field of real EVE messages, written
  // once as EVE has them and once wrong in each of those respects.
  const header = 'syntax = "proto3"; package org.lfedge.eve.config;';
  const diffText = (text: string): string[] => {
    const root = protobuf.parse(text, { keepCase: true }).root;
    root.resolveAll();
    return diffProtoAgainstSchema(root, schema).map((d) => d.text);
  };

  it('accepts maps, oneofs, proto3 optional and repeated fields written as EVE has them', () => {
    expect(
      diffText(`${header}
        message PhysicalIO { string phylabel = 2; map<string, string> phyaddrs = 3; map<string, string> cbattr = 8; }
        message BondAdapter { oneof monitoring { MIIMonitor mii = 5; } }
        message MIIMonitor {}
        message InlineOpaqueBase64Data { optional string base64MetaData = 3; }
        message EdgeDevConfig { repeated ConfigItem configItems = 11; }
        message ConfigItem {}`),
    ).toEqual([]);
  });

  it('reports a wrong map value, a lost oneof, a lost proto3 optional, a wrong label and wrong types', () => {
    expect(
      diffText(`${header}
        message PhysicalIO { map<string, uint32> phyaddrs = 3; repeated string cbattr = 8; string phylabel = 2; }
        message BondAdapter { MIIMonitor mii = 5; }
        message MIIMonitor {}
        message InlineOpaqueBase64Data { string base64MetaData = 3; }
        message UUIDandVersion { repeated string uuid = 1; uint64 version = 2; }
        message EdgeDevConfig { UUIDandVersion reboot = 9; }`),
    ).toEqual([
      'org.lfedge.eve.config.PhysicalIO field 3 "phyaddrs": map value uint32, EVE has string',
      'org.lfedge.eve.config.PhysicalIO field 8 "cbattr": repeated string, EVE has a map',
      'org.lfedge.eve.config.BondAdapter field 5 "mii": in no oneof, EVE has oneof monitoring',
      `org.lfedge.eve.config.InlineOpaqueBase64Data field 3 "base64MetaData": not proto3 optional, EVE's is`,
      'org.lfedge.eve.config.UUIDandVersion field 1 "uuid": label repeated, EVE has optional',
      'org.lfedge.eve.config.UUIDandVersion field 2 "version": type uint64, EVE has string',
      'org.lfedge.eve.config.EdgeDevConfig field 9 "reboot": type message .org.lfedge.eve.config.UUIDandVersion, EVE has message .org.lfedge.eve.config.DeviceOpsCmd',
    ]);
  });

  it('names map entry messages as protoc does', () => {
    expect(mapEntryName('phyaddrs')).toBe('PhyaddrsEntry');
    expect(mapEntryName('top10_input_sources')).toBe('Top10InputSourcesEntry');
  });
});
