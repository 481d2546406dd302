// Builds a device's EdgeDevConfig from its group (GroupSpec ⊕ group overlay ⊕ device overlay).
// Everything in it is derived (name-based UUIDs, counters), so nothing per device is stored and the
// same inputs always encode to the same bytes, which is what makes the config hash meaningful.

import { createHash } from 'node:crypto';
import { common, config } from '../../gen/eve-types.js';
import type { AppTemplate } from '../../scenario/scenario-types.js';
import type { AppOverlay, ConfigOverlay } from './config-overlay.js';
import { deviceObjectUuids, EVESIM_NAMESPACE, uuidV5 } from './derived-uuid.js';
import type { DeviceRecord } from './device-record.js';
import { lpsServerFor } from './lps-config.js';

export const ENTERPRISE_NAME = 'evesim';
export const ENTERPRISE_ID = uuidV5(EVESIM_NAMESPACE, 'enterprise/evesim');
const DATASTORE_ID = uuidV5(EVESIM_NAMESPACE, 'datastore/evesim-registry');
const APP_MEMORY_KB = 262_144;
const APP_VOLUME_BYTES = 512 * 1024 * 1024;

const digests = new Map<string, string>();
/** A stand-in image digest per app name (the same for every device), computed once. */
function contentDigest(appName: string): string {
  let d = digests.get(appName);
  if (!d) {
    d = createHash('sha256').update(`evesim/${appName}`).digest('hex');
    if (digests.size < 10_000) digests.set(appName, d);
  }
  return d;
}

/** One app as the device's config serves it, after overlays. */
export interface EffectiveApp {
  template: AppTemplate;
  activate: boolean;
  restart: number;
  purge: number;
}

/** The device's apps after group and device overlays (activate overrides, counter sums). */
export function effectiveApps(dev: DeviceRecord): EffectiveApp[] {
  const g = dev.group.overlay.apps;
  const d = dev.overlay?.apps;
  return dev.group.spec.apps.map((t) => {
    const ga: AppOverlay | undefined = g?.get(t.name);
    const da: AppOverlay | undefined = d?.get(t.name);
    return {
      template: t,
      activate: da?.activate ?? ga?.activate ?? t.activate,
      restart: (ga?.restart ?? 0) + (da?.restart ?? 0),
      purge: (ga?.purge ?? 0) + (da?.purge ?? 0),
    };
  });
}

/** Config items after overlays, sorted by key (a stable encoding). */
export function effectiveConfigItems(dev: DeviceRecord): [string, string][] {
  const items = new Map(Object.entries(dev.group.spec.configItems));
  for (const o of [dev.group.overlay, dev.overlay]) {
    for (const [k, v] of o?.configItems ?? []) {
      if (v === null) items.delete(k);
      else items.set(k, v);
    }
  }
  return [...items].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

function pick<K extends keyof ConfigOverlay>(dev: DeviceRecord, key: K): ConfigOverlay[K] | undefined {
  return dev.overlay?.[key] ?? dev.group.overlay[key];
}

export interface ConfigBuildContext {
  /** controllercert_confighash: changes when the controller's signing or ECDH certificate does. */
  controllerCertConfigHash: string;
}

export function buildEdgeDevConfig(dev: DeviceRecord, ctx: ConfigBuildContext): config.EdgeDevConfig {
  const spec = dev.group.spec;
  const g = dev.group.overlay;
  const d = dev.overlay;
  const effective = effectiveApps(dev);
  const groupLps = lpsServerFor(spec, dev);
  const ids = deviceObjectUuids(dev.uuid, effective.map((a) => a.template.name));
  const niUuid = ids.networkInstance;
  const netUuid = ids.network;

  const apps: config.AppInstanceConfig[] = [];
  const volumes: config.Volume[] = [];
  const contentInfo: config.ContentTree[] = [];
  effective.forEach((a, i) => {
    const app = ids.apps[i]!;
    contentInfo.push({
      uuid: app.contentTree,
      dsId: DATASTORE_ID,
      URL: `evesim/${a.template.name}:latest`,
      iformat: config.Format.CONTAINER,
      sha256: contentDigest(a.template.name),
      maxSizeBytes: APP_VOLUME_BYTES,
      displayName: a.template.name,
    });
    volumes.push({
      uuid: app.volume,
      origin: { type: config.VolumeContentOriginType.VCOT_DOWNLOAD, downloadContentTreeID: app.contentTree },
      // A purge recreates the app's volumes: a new generation.
      generationCount: a.purge,
      maxsizebytes: APP_VOLUME_BYTES,
      displayName: `${a.template.name}-volume`,
    });
    apps.push({
      uuidandversion: { uuid: app.app, version: '1' },
      displayname: a.template.name,
      fixedresources: { memory: APP_MEMORY_KB, maxmem: APP_MEMORY_KB, vcpus: 1, virtualizationMode: config.VmMode.NOHYPER },
      activate: a.activate,
      interfaces: [{ name: 'eth0', networkId: niUuid }],
      restart: { counter: a.restart },
      purge: { counter: a.purge },
      volumeRefList: [{ uuid: app.volume, generationCount: a.purge, mount_dir: '' }],
      profile_list: [...a.template.profiles],
    });
  });

  const out: config.EdgeDevConfig = {
    id: { uuid: dev.uuid, version: `${g.version}.${dev.deviceVersion}` },
    apps,
    networks: [{ id: netUuid, type: common.NetworkType.V4, ip: { dhcp: common.DHCPType.Client } }],
    datastores: [{ id: DATASTORE_ID, dType: config.DsType.DsContainerRegistry, fqdn: 'docker://registry.evesim.invalid', dpath: 'evesim' }],
    reboot: { counter: g.reboot + (d?.reboot ?? 0), desiredState: true },
    configItems: effectiveConfigItems(dev).map(([key, value]) => ({ key, value })),
    systemAdapterList: [{ name: 'eth0', uplink: true, networkUUID: netUuid, lowerLayerName: 'eth0' }],
    deviceIoList: [
      { ptype: common.PhyIoType.PhyIoNetEth, phylabel: 'eth0', phyaddrs: { Ifname: 'eth0' }, logicallabel: 'eth0', assigngrp: 'eth0', usage: common.PhyIoMemberUsage.PhyIoUsageMgmtAndApps },
    ],
    manufacturer: spec.hardware.manufacturer,
    productName: spec.hardware.model,
    networkInstances: [
      {
        uuidandversion: { uuid: niUuid, version: '1' },
        displayname: 'local',
        instType: config.ZNetworkInstType.ZnetInstLocal,
        activate: true,
        port: { type: common.PhyIoType.PhyIoNetEth, name: 'uplink' },
        ipType: config.AddressType.IPV4,
        ip: {
          dhcp: common.DHCPType.Static,
          subnet: '10.11.12.0/24',
          gateway: '10.11.12.1',
          dns: ['10.11.12.1'],
          dhcpRange: { start: '10.11.12.2', end: '10.11.12.254' },
        },
      },
    ],
    contentInfo,
    volumes,
    controllercert_confighash: ctx.controllerCertConfigHash,
    maintenance_mode: pick(dev, 'maintenanceMode') ?? false,
    controller_epoch: g.epoch + (d?.epoch ?? 0),
    global_profile: pick(dev, 'globalProfile') ?? spec.globalProfile,
    local_profile_server: pick(dev, 'localProfileServer') ?? groupLps.address,
    profile_server_token: pick(dev, 'profileServerToken') ?? groupLps.token,
    shutdown: { counter: g.shutdown + (d?.shutdown ?? 0) },
    device_name: d?.deviceName ?? dev.serial,
    project_name: spec.name,
    project_id: dev.group.projectId,
    enterprise_name: ENTERPRISE_NAME,
    enterprise_id: ENTERPRISE_ID,
  };
  return out;
}
