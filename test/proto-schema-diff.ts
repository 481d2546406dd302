// Compares a protobufjs reflection root (our proto/ files) with EVE's API schema as data
// (test/vectors/eve-api-schema.json, written from protoc's descriptor set) and lists every
// message, field and enum value of ours that EVE's schema does not have in the same shape.
// Pure: no file access, so tests can feed it roots built in memory.
import protobuf from 'protobufjs';

/** One field as the schema file writes it (protoc's FieldDescriptorProto, lower-cased). */
export interface EveSchemaField {
  name: string;
  /** Scalar type name (`uint32`, `string`, ...) or `message` / `enum`. */
  type: string;
  label: 'optional' | 'repeated' | 'required';
  /** For message and enum fields: the full type name with a leading dot. */
  type_name?: string;
  /** The real oneof the field belongs to (proto3 `optional`'s synthetic oneofs are left out). */
  oneof?: string;
  proto3_optional?: boolean;
}

export interface EveSchema {
  messages: Record<string, { file: string; fields: Record<string, EveSchemaField> }>;
  enums: Record<string, { file: string; values: Record<string, number> }>;
}

/** What a disagreement is about, so an allow-list can name it without matching on text. */
export type DifferenceSubject =
  | { kind: 'message'; message: string }
  | { kind: 'field'; message: string; number: number }
  | { kind: 'enum'; enumName: string }
  | { kind: 'enum-value'; enumName: string; value: string; number: number };

export interface Difference {
  subject: DifferenceSubject;
  /** One line naming the message or enum, the field or value, the number and what EVE has. */
  text: string;
}

/** protoc's name for a map field's entry message: `foo_bar` -> `FooBarEntry`. */
export function mapEntryName(fieldName: string): string {
  const camel = fieldName.replace(/_(.)/g, (_m, c: string) => c.toUpperCase());
  return `${camel.charAt(0).toUpperCase()}${camel.slice(1)}Entry`;
}

/** The type in schema terms: scalar name, or `message`/`enum` with the dotted full name. */
function ourType(field: protobuf.Field): { type: string; type_name?: string } {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type) return { type: 'message', type_name: resolved.fullName };
  if (resolved instanceof protobuf.Enum) return { type: 'enum', type_name: resolved.fullName };
  return { type: field.type };
}

function describeType(t: { type: string; type_name?: string }): string {
  return t.type_name ? `${t.type} ${t.type_name}` : t.type;
}

/** If EVE's field is a map (a repeated field of this message's nested XxxEntry), that entry message. */
function eveMapEntry(schema: EveSchema, messageName: string, eve: EveSchemaField): EveSchema['messages'][string] | undefined {
  if (eve.label !== 'repeated' || eve.type !== 'message') return undefined;
  if (eve.type_name !== `.${messageName}.${mapEntryName(eve.name)}`) return undefined;
  const entry = schema.messages[eve.type_name.slice(1)];
  if (!entry || !entry.fields['1'] || !entry.fields['2']) return undefined;
  return entry;
}

function isProto3Optional(field: protobuf.Field): boolean {
  return (field.options as Record<string, unknown> | undefined)?.['proto3_optional'] === true;
}

function diffField(schema: EveSchema, messageName: string, field: protobuf.Field, out: Difference[]): void {
  const where = `${messageName} field ${field.id} "${field.name}"`;
  const subject: DifferenceSubject = { kind: 'field', message: messageName, number: field.id };
  const add = (what: string): void => void out.push({ subject, text: `${where}: ${what}` });
  const eve = schema.messages[messageName]?.fields[String(field.id)];
  if (!eve) {
    add(`EVE's schema has no field ${field.id}`);
    return;
  }
  if (eve.name !== field.name) add(`name, EVE has "${eve.name}"`);

  const entry = eveMapEntry(schema, messageName, eve);
  if (field instanceof protobuf.MapField) {
    if (!entry) {
      add(`map<${field.keyType}, ${field.type}>, EVE has ${eve.label} ${describeType(eve)}`);
      return;
    }
    const eveKey = entry.fields['1'];
    const eveValue = entry.fields['2'];
    if (eveKey.type !== field.keyType) add(`map key ${field.keyType}, EVE has ${eveKey.type}`);
    const value = ourType(field);
    if (value.type !== eveValue.type || value.type_name !== eveValue.type_name) {
      add(`map value ${describeType(value)}, EVE has ${describeType(eveValue)}`);
    }
    return;
  }
  if (entry) {
    add(`${field.repeated ? 'repeated' : 'singular'} ${describeType(ourType(field))}, EVE has a map`);
    return;
  }

  const type = ourType(field);
  if (type.type !== eve.type || type.type_name !== eve.type_name) {
    add(`type ${describeType(type)}, EVE has ${describeType(eve)}`);
  }
  const label = field.repeated ? 'repeated' : 'optional';
  if (label !== eve.label) add(`label ${label}, EVE has ${eve.label}`);
  const optional = isProto3Optional(field);
  if (optional !== (eve.proto3_optional === true)) {
    add(optional ? `declared proto3 optional, EVE's is not` : `not proto3 optional, EVE's is`);
  }
  const oneof = optional ? undefined : field.partOf?.name;
  if (oneof !== eve.oneof) {
    add(`${oneof ? `in oneof ${oneof}` : 'in no oneof'}, EVE has ${eve.oneof ? `oneof ${eve.oneof}` : 'no oneof'}`);
  }
}

function diffType(schema: EveSchema, type: protobuf.Type, out: Difference[]): void {
  const name = type.fullName.slice(1);
  if (!schema.messages[name]) {
    out.push({ subject: { kind: 'message', message: name }, text: `message ${name} is not in EVE's schema` });
    return;
  }
  for (const field of type.fieldsArray) diffField(schema, name, field, out);
}

function diffEnum(schema: EveSchema, en: protobuf.Enum, out: Difference[]): void {
  const name = en.fullName.slice(1);
  const eve = schema.enums[name];
  if (!eve) {
    out.push({ subject: { kind: 'enum', enumName: name }, text: `enum ${name} is not in EVE's schema` });
    return;
  }
  for (const [value, number] of Object.entries(en.values)) {
    const subject: DifferenceSubject = { kind: 'enum-value', enumName: name, value, number };
    const eveNumber = eve.values[value];
    if (eveNumber === undefined) {
      const sameNumber = Object.entries(eve.values).filter(([, n]) => n === number).map(([v]) => v);
      const hint = sameNumber.length > 0 ? `; EVE's ${number} is ${sameNumber.join(' / ')}` : '';
      out.push({ subject, text: `enum ${name} value ${value} = ${number} is not in EVE's schema${hint}` });
    } else if (eveNumber !== number) {
      out.push({ subject, text: `enum ${name} value ${value} = ${number}, EVE has ${value} = ${eveNumber}` });
    }
  }
}

function walk(ns: protobuf.NamespaceBase, schema: EveSchema, out: Difference[]): void {
  for (const nested of ns.nestedArray) {
    // google.protobuf.* are protobufjs' bundled well-known types, not ours.
    if (nested.fullName === '.google') continue;
    if (nested instanceof protobuf.Type) diffType(schema, nested, out);
    else if (nested instanceof protobuf.Enum) diffEnum(schema, nested, out);
    if (nested instanceof protobuf.Namespace) walk(nested, schema, out);
  }
}

/** Every way the messages, fields and enum values in `root` disagree with EVE's schema. */
export function diffProtoAgainstSchema(root: protobuf.Root, schema: EveSchema): Difference[] {
  const out: Difference[] = [];
  walk(root, schema, out);
  return out;
}

/** A difference EVE's own newer releases have, named by what it is about. */
export interface AllowedDifference {
  subject: DifferenceSubject;
  reason: string;
}

/** A stable text key for a subject, to match allow-list entries against differences. */
export function subjectKey(s: DifferenceSubject): string {
  switch (s.kind) {
    case 'message':
      return `message ${s.message}`;
    case 'field':
      return `field ${s.message} ${s.number}`;
    case 'enum':
      return `enum ${s.enumName}`;
    case 'enum-value':
      return `enum-value ${s.enumName} ${s.value} ${s.number}`;
  }
}
