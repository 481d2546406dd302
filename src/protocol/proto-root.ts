// Loads our EVE .proto files (repo-root/proto) into one protobufjs reflection root,
// once per process. Field names keep their .proto spelling (keepCase).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

// 64-bit integers must decode to plain JS numbers (exact up to 2^53), not Long
// objects. protobufjs decides this from util.Long when it builds readers and
// fields, so it is switched off before anything is loaded. This is process-wide.
protobuf.util.Long = undefined as unknown as typeof protobuf.util.Long;
protobuf.configure();

const MARKER = path.join('proto', 'auth', 'auth.proto');

/** Finds the repository's proto/ directory by walking up from this module (src/ or dist/src/). */
export function findProtoDir(startDir: string = path.dirname(fileURLToPath(import.meta.url))): string {
  let dir = startDir;
  for (;;) {
    if (existsSync(path.join(dir, MARKER))) return path.join(dir, 'proto');
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`cannot find the EVE proto directory (a folder containing ${MARKER}) above ${startDir}`);
    }
    dir = parent;
  }
}

function listProtoFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listProtoFiles(full));
    else if (name.endsWith('.proto')) out.push(full);
  }
  return out;
}

/** Parses every .proto under protoDir into a new, fully resolved root. */
export function loadProtoRoot(protoDir: string = findProtoDir()): protobuf.Root {
  const root = new protobuf.Root();
  // Imports are written relative to proto/ (e.g. "evecommon/evecommon.proto");
  // google/protobuf/* comes from protobufjs' bundled copies.
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(protoDir, target));
  try {
    root.loadSync(listProtoFiles(protoDir), { keepCase: true });
    root.resolveAll();
    giveBytesFieldsRealDefaults(root);
  } catch (err) {
    throw new Error(`failed to load EVE protos from ${protoDir}: ${(err as Error).message}`, { cause: err });
  }
  return root;
}

const EMPTY_BYTES = new Uint8Array(0);

/**
 * protobufjs leaves an unset bytes field as a shared plain `[]` on the message prototype; the
 * codec contract says bytes are Uint8Array, so node:crypto and Buffer can take them as they are.
 */
function giveBytesFieldsRealDefaults(ns: protobuf.NamespaceBase): void {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Type) {
      const proto = nested.ctor.prototype as Record<string, unknown>;
      for (const field of nested.fieldsArray) {
        if (field.type === 'bytes' && !field.repeated && !field.map) proto[field.name] = EMPTY_BYTES;
      }
    }
    if (nested instanceof protobuf.Namespace) giveBytesFieldsRealDefaults(nested);
  }
}

let shared: protobuf.Root | undefined;

/** The process-wide root, loaded on first use. */
export function eveRoot(): protobuf.Root {
  shared ??= loadProtoRoot();
  return shared;
}

/** Builds every message type's encoder and decoder now rather than on first use (fixed cost, paid once). */
export function warmAllCodecs(ns: protobuf.NamespaceBase = eveRoot()): void {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Type) nested.setup();
    if (nested instanceof protobuf.Namespace) warmAllCodecs(nested);
  }
}
