// Event data structures UEFI firmware logs (UEFI spec and PFP; tpm-facts §9), all little-endian:
// UCS-2 strings, EFI GUIDs (mixed-endian), UEFI_VARIABLE_DATA, EFI_LOAD_OPTION, device paths,
// UEFI_IMAGE_LOAD_EVENT and UEFI_PLATFORM_FIRMWARE_BLOB.

import { ByteWriter } from './byte-writer.js';

/** EFI_GLOBAL_VARIABLE: BootOrder, Boot####, SecureBoot, PK, KEK. */
export const EFI_GLOBAL_VARIABLE = '8be4df61-93ca-11d2-aa0d-00e098032b8c';
/** EFI_IMAGE_SECURITY_DATABASE_GUID: db, dbx. */
export const EFI_IMAGE_SECURITY_DATABASE = 'd719b2cb-3d3a-4596-a3bc-dad00e67656f';

/** UTF-16LE with a terminating NUL (EFI CHAR16 strings). */
export function ucs2z(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text + '\0', 'utf16le'));
}

/** EFI_GUID bytes: the first three fields little-endian, the last 8 bytes as written. */
export function efiGuid(text: string): Uint8Array {
  const hex = text.replace(/-/g, '');
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new RangeError(`not a GUID: ${JSON.stringify(text)}`);
  const b = Buffer.from(hex, 'hex');
  const out = Buffer.alloc(16);
  out.writeUInt32LE(b.readUInt32BE(0), 0);
  out.writeUInt16LE(b.readUInt16BE(4), 4);
  out.writeUInt16LE(b.readUInt16BE(6), 6);
  b.copy(out, 8, 8);
  return new Uint8Array(out);
}

/** UEFI_VARIABLE_DATA: GUID | le64 name length (chars, no NUL) | le64 data length | UTF-16LE name | data. */
export function uefiVariableData(guid: string, name: string, data: Uint8Array): Uint8Array {
  const nameBytes = Buffer.from(name, 'utf16le');
  return new ByteWriter(32 + nameBytes.length + data.length)
    .bytes(efiGuid(guid))
    .u64le(name.length)
    .u64le(data.length)
    .bytes(nameBytes)
    .bytes(data)
    .finish();
}

/** A device path of one media file-path node (type 4, subtype 4) and the end node. */
export function filePathDevicePath(path: string): Uint8Array {
  const name = ucs2z(path);
  return new ByteWriter(8 + name.length).u8(4).u8(4).u16le(4 + name.length).bytes(name).u8(0x7f).u8(0xff).u16le(4).finish();
}

/** EFI_LOAD_OPTION (a Boot#### variable's data): le32 attributes | le16 path length | description | path. */
export function efiLoadOption(description: string, devicePath: Uint8Array, attributes = 1 /* LOAD_OPTION_ACTIVE */): Uint8Array {
  return new ByteWriter(64).u32le(attributes).u16le(devicePath.length).bytes(ucs2z(description)).bytes(devicePath).finish();
}

/** UEFI_IMAGE_LOAD_EVENT: le64 image address | le64 length | le64 link-time address | le64 path length | path. */
export function uefiImageLoadEvent(address: bigint, length: bigint, devicePath: Uint8Array, linkTimeAddress = 0n): Uint8Array {
  return new ByteWriter(32 + devicePath.length)
    .u64le(address)
    .u64le(length)
    .u64le(linkTimeAddress)
    .u64le(devicePath.length)
    .bytes(devicePath)
    .finish();
}

/** UEFI_PLATFORM_FIRMWARE_BLOB: le64 base | le64 length. */
export function firmwareBlob(base: bigint, length: bigint): Uint8Array {
  return new ByteWriter(16).u64le(base).u64le(length).finish();
}
