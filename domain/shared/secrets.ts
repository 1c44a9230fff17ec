// Secrets that must be used again later (webhook signing secrets, receiver auth tokens)
// cannot be hashed like API keys, so they are stored encrypted with AES-256-GCM under
// the APP_ENCRYPTION_KEY (config.appEncryptionKey). Stored form:
// `v1.<iv base64url>.<tag base64url>.<ciphertext base64url>`.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

function keyBytes(keyBase64: string): Buffer {
  const key = Buffer.from(keyBase64, 'base64');
  if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
  return key;
}

export function encryptSecret(keyBase64: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyBytes(keyBase64), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
}

export function decryptSecret(keyBase64: string, stored: string): string {
  const [version, iv, tag, ciphertext] = stored.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('unrecognised encrypted secret');
  const decipher = createDecipheriv('aes-256-gcm', keyBytes(keyBase64), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}
