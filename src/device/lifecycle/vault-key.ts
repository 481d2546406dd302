// The volume (vault) key a device with a TPM escrows with the controller (STORE_KEYS, §5.4) and
// gets back in later successful quote answers. EVE keeps it sealed to its TPM in /persist and
// sends it wrapped, with the SHA-256 of the plain key so the device can check what comes back.
//
// Here the key is fixed per device identity (same across reboots and runs, as /persist is), and
// the wrap is a stand-in for EVE's: AES-256-CFB under SHA-256 of an ECDH secret only the device
// can compute (its ECDH key with its own public key). To the controller the blob is opaque, which
// is all escrow asks of it; the device unwraps what it gets back and compares digests.

import { createCipheriv, createDecipheriv, createHash, createPublicKey, diffieHellman, type KeyObject } from 'node:crypto';
import { attest } from '../../gen/eve-types.js';
import { Msg } from '../../protocol/messages.js';

const IV = Buffer.alloc(16); // one key wraps one message: a fixed IV is fine for CFB here

export class VaultKey {
  private readonly plain: Buffer;
  private readonly digest: Buffer;
  private wrapKey: Buffer | undefined;
  private escrowed: attest.AttestVolumeKey[] | undefined;

  /** `devicePem`: the device certificate PEM the key is derived from; `ecdhKey`: read on first use. */
  constructor(
    devicePem: string,
    private readonly ecdhKey: () => KeyObject,
  ) {
    this.plain = createHash('sha256').update('evesim vault key\0').update(devicePem).digest();
    this.digest = createHash('sha256').update(this.plain).digest();
  }

  private wrapping(): Buffer {
    if (!this.wrapKey) {
      const key = this.ecdhKey();
      const secret = diffieHellman({ privateKey: key, publicKey: createPublicKey(key) });
      this.wrapKey = createHash('sha256').update('evesim vault wrap\0').update(secret).digest();
    }
    return this.wrapKey;
  }

  /** The keys of a STORE_KEYS request: one VSK whose key is a marshalled AttestVolumeKeyData. */
  escrowKeys(): attest.AttestVolumeKey[] {
    if (!this.escrowed) {
      const c = createCipheriv('aes-256-cfb', this.wrapping(), IV);
      const encrypted = Buffer.concat([c.update(this.plain), c.final()]);
      const data = Msg.AttestVolumeKeyData.encode({
        encrypted_key: encrypted,
        digest_sha256: this.digest,
        version: attest.AttestVolumeKeyVersion.ATTEST_VOLUME_KEY_VERSION_V1,
      });
      this.escrowed = [{ key_type: attest.AttestVolumeKeyType.ATTEST_VOLUME_KEY_TYPE_VSK, key: data }];
    }
    return this.escrowed;
  }

  /**
   * Checks a key handed back in a SUCCESS answer: undefined when it unwraps to this device's key,
   * else what is wrong with it.
   */
  checkReturned(k: attest.AttestVolumeKey): string | undefined {
    let data: attest.AttestVolumeKeyData;
    try {
      data = Msg.AttestVolumeKeyData.decode(k.key ?? new Uint8Array(0));
    } catch (e) {
      return `returned volume key is not an AttestVolumeKeyData (${(e as Error).message})`;
    }
    const d = createDecipheriv('aes-256-cfb', this.wrapping(), IV);
    const plain = Buffer.concat([d.update(data.encrypted_key ?? new Uint8Array(0)), d.final()]);
    const digest = createHash('sha256').update(plain).digest();
    if (!digest.equals(this.digest)) return 'returned volume key does not unwrap to the key this device escrowed';
    if (!Buffer.from(data.digest_sha256 ?? []).equals(this.digest)) return 'returned volume key carries a different digest_sha256';
    return undefined;
  }
}
