// Name-based UUIDs (RFC 9562 version 5): the same device and app name always give the same app
// instance, volume and content-tree UUIDs, so a restarted controller serves the same ids and the
// per-device config needs nothing stored.

import { createHash } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Namespace for names that have no device (groups, enterprise): the v5 UUID of "evesim" in the RFC DNS namespace. */
export const EVESIM_NAMESPACE = '2dba4fab-42c7-5c17-a50b-848bbffd8904';

export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

function namespaceBytes(namespace: string): Buffer {
  if (!isUuid(namespace)) throw new Error(`uuidV5: namespace is not a UUID: ${namespace}`);
  return Buffer.from(namespace.replace(/-/g, ''), 'hex');
}

function v5(ns: Buffer, name: string): string {
  const h = createHash('sha1').update(ns).update(name, 'utf8').digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.toString('hex', 0, 16);
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export function uuidV5(namespace: string, name: string): string {
  return v5(namespaceBytes(namespace), name);
}

export interface AppObjectUuids {
  app: string;
  volume: string;
  contentTree: string;
}

/** The UUIDs of one app of one device: instance, its volume and the volume's content tree. */
export function appObjectUuids(deviceUuid: string, appName: string): AppObjectUuids {
  return appUuidsIn(namespaceBytes(deviceUuid), appName);
}

/** Only the app instance UUID (what app log paths carry). */
export function appInstanceUuid(deviceUuid: string, appName: string): string {
  return v5(namespaceBytes(deviceUuid), `app/${appName}`);
}

function appUuidsIn(ns: Buffer, appName: string): AppObjectUuids {
  return { app: v5(ns, `app/${appName}`), volume: v5(ns, `volume/${appName}`), contentTree: v5(ns, `content-tree/${appName}`) };
}

/** Everything a device's config names by UUID, computed with one namespace conversion. */
export function deviceObjectUuids(
  deviceUuid: string,
  appNames: readonly string[],
): { networkInstance: string; network: string; apps: AppObjectUuids[] } {
  const ns = namespaceBytes(deviceUuid);
  return { networkInstance: v5(ns, 'network-instance/local'), network: v5(ns, 'network/eth0'), apps: appNames.map((n) => appUuidsIn(ns, n)) };
}
