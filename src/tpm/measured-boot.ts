// A UEFI + shim + GRUB measured boot derived only from the build (EVE version, firmware version), so
// every device of one build gets the same event log and the same PCRs, and a "tampered" device gets a
// different kernel measurement in PCR 9 (as if someone swapped the kernel). The event order and data
// follow EDK2/OVMF, shim and GRUB (tpm-facts §9); image contents are stand-ins hashed from the build.
// Built once per build and shared by all its devices: a device keeps no copy of its log.

import { createHash } from 'node:crypto';
import { EV } from './event-types.js';
import { gzipEventLog } from './event-log-gzip.js';
import { serializeEventLog, sha256SpecId, type PcrEvent2, type TcgEventLog } from './event-log.js';
import { replayEventLog } from './event-log-replay.js';
import { EVE_QUOTE_SELECTION, computePcrDigest } from './pcr-selection.js';
import { TPM_ALG_SHA256 } from './tpm-constants.js';
import {
  EFI_GLOBAL_VARIABLE,
  EFI_IMAGE_SECURITY_DATABASE,
  efiLoadOption,
  filePathDevicePath,
  firmwareBlob,
  ucs2z,
  uefiImageLoadEvent,
  uefiVariableData,
} from './uefi-event-data.js';

export interface BootBuild {
  /** EVE version string, e.g. "14.5.2-kvm-amd64" (ATTEST_VERSION_TYPE_EVE). */
  eveVersion: string;
  /** BIOS vendor-version-date, e.g. "EDK II-1.16-02/02/2024" (ATTEST_VERSION_TYPE_FIRMWARE). */
  firmwareVersion: string;
  /** Measure a different kernel image into PCR 9. */
  tampered?: boolean;
}

export interface MeasuredBoot {
  readonly build: Readonly<Required<BootBuild>>;
  readonly log: TcgEventLog;
  /** The binary log, as /sys/kernel/security/tpm0/binary_bios_measurements holds it. */
  readonly logBytes: Uint8Array;
  /** SHA-256 PCR 0–23 after boot (768 bytes); never mutate: devices copy it. */
  readonly pcrs: Uint8Array;
  /** pcrDigest of EVE's quote selection (SHA-256 PCR 0–15) over `pcrs`, shared by the build's devices. */
  readonly eveQuoteDigest: Uint8Array;
  /** gzip of logBytes (what EVE puts in tpm_binary_event_log), made on first use. */
  logGzip(): Uint8Array;
}

const sha256 = (data: Uint8Array | string): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest());
const ascii = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));
const SEPARATOR_DATA = new Uint8Array(4);

function event(pcrIndex: number, eventType: number, data: Uint8Array, digest: Uint8Array = sha256(data)): PcrEvent2 {
  return { pcrIndex, eventType, digests: [{ hashAlg: TPM_ALG_SHA256, digest }], data };
}

/** GRUB's PCR 8 record: data is "<prefix><text>\0", the digest covers only <text>. */
function grubString(prefix: string, text: string): PcrEvent2 {
  return event(8, EV.IPL, ascii(`${prefix}${text}\0`), sha256(text));
}

/** The events of one boot, in the order firmware, shim and GRUB log them. */
export function bootEvents(build: BootBuild): PcrEvent2[] {
  const { eveVersion, firmwareVersion } = build;
  const image = (what: string): Uint8Array => sha256(`evesim ${what}\0${eveVersion}`);
  const espPath = (p: string): Uint8Array => filePathDevicePath(p);
  const cmdline = 'console=ttyS0 console=tty0 rootdelay=3 linuxkit.unified_cgroup_hierarchy=0 root=PARTLABEL=IMGA';
  const kernel = sha256(`evesim kernel\0${eveVersion}${build.tampered ? '\0tampered' : ''}`);
  const grubCfg = `set root=(hd0,gpt2)\nlinux /boot/kernel ${cmdline}\n# ${eveVersion}\n`;
  const bootOrder = new Uint8Array([0x00, 0x00, 0x01, 0x00]);
  const empty = new Uint8Array(0);
  const variableBoot = (name: string, data: Uint8Array): PcrEvent2 =>
    // EDK2 hashes only the variable's data for Boot#### and BootOrder.
    event(1, EV.EFI_VARIABLE_BOOT, uefiVariableData(EFI_GLOBAL_VARIABLE, name, data), sha256(data));
  const driverConfig = (guid: string, name: string, data: Uint8Array): PcrEvent2 =>
    event(7, EV.EFI_VARIABLE_DRIVER_CONFIG, uefiVariableData(guid, name, data));

  return [
    event(0, EV.S_CRTM_VERSION, ucs2z(firmwareVersion)),
    event(0, EV.EFI_PLATFORM_FIRMWARE_BLOB, firmwareBlob(0x820000n, 0xe0000n), sha256(`evesim firmware volume\0${firmwareVersion}`)),
    driverConfig(EFI_GLOBAL_VARIABLE, 'SecureBoot', new Uint8Array([0])),
    driverConfig(EFI_GLOBAL_VARIABLE, 'PK', empty),
    driverConfig(EFI_GLOBAL_VARIABLE, 'KEK', empty),
    driverConfig(EFI_IMAGE_SECURITY_DATABASE, 'db', empty),
    driverConfig(EFI_IMAGE_SECURITY_DATABASE, 'dbx', empty),
    variableBoot('BootOrder', bootOrder),
    variableBoot('Boot0000', efiLoadOption('EVE', espPath('\\EFI\\BOOT\\BOOTX64.EFI'))),
    event(4, EV.EFI_ACTION, ascii('Calling EFI Application from Boot Option')),
    ...[0, 1, 2, 3, 4, 5, 6, 7].map((pcr) => event(pcr, EV.SEPARATOR, SEPARATOR_DATA)),
    event(4, EV.EFI_BOOT_SERVICES_APPLICATION, uefiImageLoadEvent(0x7d8b6000n, 0x1b2000n, espPath('\\EFI\\BOOT\\BOOTX64.EFI')), image('shim')),
    event(4, EV.EFI_BOOT_SERVICES_APPLICATION, uefiImageLoadEvent(0x7d6a2000n, 0x1e4000n, espPath('\\EFI\\BOOT\\grubx64.efi')), image('grub')),
    event(9, EV.IPL, ascii('/EFI/BOOT/grub.cfg\0'), sha256(grubCfg)),
    grubString('grub_cmd: ', 'set root=(hd0,gpt2)'),
    grubString('grub_cmd: ', `linux /boot/kernel ${cmdline}`),
    event(9, EV.IPL, ascii('/boot/kernel\0'), kernel),
    grubString('kernel_cmdline: ', `/boot/kernel ${cmdline}`),
    event(5, EV.EFI_ACTION, ascii('Exit Boot Services Invocation')),
    event(5, EV.EFI_ACTION, ascii('Exit Boot Services Returned with Success')),
  ];
}

function buildKey(b: BootBuild): string {
  return `${b.eveVersion}\0${b.firmwareVersion}\0${b.tampered ? 1 : 0}`;
}

function checkBuild(b: BootBuild): void {
  for (const f of ['eveVersion', 'firmwareVersion'] as const) {
    if (typeof b[f] !== 'string' || b[f].length === 0 || b[f].length > 256) {
      throw new TypeError(`measured boot: ${f} must be a non-empty string of at most 256 characters, got ${JSON.stringify(b[f])}`);
    }
  }
}

function makeMeasuredBoot(b: BootBuild): MeasuredBoot {
  checkBuild(b);
  const build = { eveVersion: b.eveVersion, firmwareVersion: b.firmwareVersion, tampered: b.tampered === true };
  const log: TcgEventLog = { specId: sha256SpecId(), events: bootEvents(build) };
  const logBytes = serializeEventLog(log);
  const pcrs = replayEventLog(log, TPM_ALG_SHA256).bank;
  const eveQuoteDigest = computePcrDigest([EVE_QUOTE_SELECTION], (_h, i) => pcrs.subarray(i * 32, i * 32 + 32));
  let gz: Uint8Array | undefined;
  return {
    build,
    log,
    logBytes,
    pcrs,
    eveQuoteDigest,
    logGzip() {
      gz ??= gzipEventLog(logBytes);
      return gz;
    },
  };
}

// Builds seen in this process. A scenario has a handful; the cap only guards against misuse.
const cache = new Map<string, MeasuredBoot>();
const CACHE_CAP = 1024;

/** The measured boot of a build, shared by every device of that build. */
export function measuredBoot(build: BootBuild): MeasuredBoot {
  const key = buildKey(build);
  let mb = cache.get(key);
  if (!mb) {
    mb = makeMeasuredBoot(build);
    if (cache.size >= CACHE_CAP) cache.delete(cache.keys().next().value!);
    cache.set(key, mb);
  }
  return mb;
}
