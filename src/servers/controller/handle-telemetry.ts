// What devices report: info, metrics, protobuf logs (device and app instance) and flow logs. Every
// body is decoded and checked (undecodable → 422, counted); only counts and last-seen keys are
// kept, never the bodies. All answer 201 without a body.

import { info, type flowlog, type logs, type metrics } from '../../gen/eve-types.js';
import type { Codec } from '../../protocol/codec.js';
import { Msg } from '../../protocol/messages.js';
import type { ControllerContext, Reply, RequestState } from './controller-context.js';
import { authenticateDevice } from './device-auth.js';
import type { DeviceRecord } from './device-record.js';
import { appInstanceUuid } from './derived-uuid.js';
import { badRequest, unprocessable } from './http-error.js';

const T = info.ZInfoTypes;
/** Which InfoContent member each info type carries. */
const CONTENT_OF: Partial<Record<number, NonNullable<info.ZInfoMsg['InfoContent']>>> = {
  [T.ZiDevice]: 'dinfo',
  [T.ZiApp]: 'ainfo',
  [T.ZiNetworkInstance]: 'niinfo',
  [T.ZiVolume]: 'vinfo',
  [T.ZiContentTree]: 'cinfo',
  [T.ZiBlobList]: 'binfo',
  [T.ZiAppInstMetaData]: 'amdinfo',
  [T.ZiHardware]: 'hwinfo',
  [T.ZiEdgeview]: 'evinfo',
  [T.ZiLocation]: 'locinfo',
};

function decodeAs<M>(codec: Codec<M>, payload: Uint8Array, what: string): M {
  try {
    return codec.decode(payload);
  } catch (e) {
    throw unprocessable(`payload is not a ${what}: ${(e as Error).message}`);
  }
}

/** A device id inside a message, when set, must be the sender's UUID. */
function checkDeviceId(field: string, value: string | undefined, dev: DeviceRecord): void {
  if (value && value !== dev.uuid) throw unprocessable(`${field} "${value}" is not the sender's UUID ${dev.uuid}`);
}

export function handleInfo(ctx: ControllerContext, req: RequestState): Reply {
  const { device, payload } = authenticateDevice(ctx, req);
  const msg = decodeAs(Msg.ZInfoMsg, payload, 'ZInfoMsg');
  checkDeviceId('devId', msg.devId, device);
  const ztype = msg.ztype ?? 0;
  const expected = CONTENT_OF[ztype];
  if (msg.InfoContent && expected && msg.InfoContent !== expected) {
    throw unprocessable(`ztype ${T[ztype] ?? ztype} carries ${msg.InfoContent}; expected ${expected}`);
  }
  device.counters.recordInfo(ztype, infoObjectKey(msg, device), req.now);
  if (msg.dinfo) {
    device.lastBootReason = msg.dinfo.last_boot_reason ?? 0;
    device.restartCounter = msg.dinfo.restartCounter ?? 0;
  }
  ctx.stats.infoByType.set(ztype, (ctx.stats.infoByType.get(ztype) ?? 0) + 1);
  return { status: 201 };
}

/** The object an info message reports on (EVE queues one pending item per such key, §6.5). */
function infoObjectKey(m: info.ZInfoMsg, dev: DeviceRecord): string {
  switch (m.InfoContent) {
    case 'dinfo':
      return dev.uuid;
    case 'ainfo':
      return m.ainfo?.AppID ?? '';
    case 'niinfo':
      return m.niinfo?.networkID ?? '';
    case 'vinfo':
      return m.vinfo?.uuid ?? '';
    case 'cinfo':
      return m.cinfo?.uuid ?? '';
    case 'binfo':
      return m.binfo?.blob?.[0]?.sha256 ?? '';
    case 'amdinfo':
      return m.amdinfo?.uuid ?? '';
    default:
      return m.InfoContent ?? '';
  }
}

export function handleMetrics(ctx: ControllerContext, req: RequestState): Reply {
  const { device, payload } = authenticateDevice(ctx, req);
  const msg: metrics.ZMetricMsg = decodeAs(Msg.ZMetricMsg, payload, 'ZMetricMsg');
  checkDeviceId('devID', msg.devID, device);
  return { status: 201 };
}

export function handleLogs(ctx: ControllerContext, req: RequestState): Reply {
  const { device, payload } = authenticateDevice(ctx, req);
  const msg: logs.LogBundle = decodeAs(Msg.LogBundle, payload, 'LogBundle');
  checkDeviceId('devID', msg.devID, device);
  req.logLines = msg.log?.length ?? 0;
  return { status: 201 };
}

export function handleAppLogs(ctx: ControllerContext, req: RequestState): Reply {
  const { device, payload } = authenticateDevice(ctx, req);
  requireAppOf(device, req.route.appUuid!);
  const msg: logs.AppInstanceLogBundle = decodeAs(Msg.AppInstanceLogBundle, payload, 'AppInstanceLogBundle');
  req.logLines = msg.log?.length ?? 0;
  return { status: 201 };
}

export function handleFlowlog(ctx: ControllerContext, req: RequestState): Reply {
  const { device, payload } = authenticateDevice(ctx, req);
  const msg: flowlog.FlowMessage = decodeAs(Msg.FlowMessage, payload, 'FlowMessage');
  checkDeviceId('devId', msg.devId, device);
  return { status: 201 };
}

/** The app name for an app instance UUID of this device's config; unknown → 400. */
export function requireAppOf(device: DeviceRecord, appUuid: string): string {
  for (const a of device.group.spec.apps) {
    if (appInstanceUuid(device.uuid, a.name) === appUuid) return a.name;
  }
  throw badRequest(`unknown app instance ${appUuid} for device ${device.uuid}`);
}
