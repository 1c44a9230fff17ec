// Object storage for documents, templates, CSVs, photos, scans and raw emails, on any
// S3-compatible store. Failures become a retryable 503 so callers never half-commit.
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config } from '../../config';

// Not a setting: the AWS SDK reads only this variable to silence its notice that later
// releases will need Node 22. Node 20 is this project's runtime, so the notice would be
// noise in every log; it is set before any client is built.
// eslint-disable-next-line no-restricted-syntax -- sets a variable for the SDK, reads no setting
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import { errors } from '../../domain/shared/errors';

export const SIGNED_URL_SECONDS = 3600;

export interface SignedUrlOptions {
  expiresInSeconds?: number;
  /** Sent back by the store as Content-Disposition (domain/shared/downloads.ts), so the file keeps its sender's name. */
  contentDisposition?: string;
}

export interface ObjectStorage {
  client: S3Client;
  bucket: string;
  put(key: string, body: Buffer | string, contentType: string): Promise<void>;
  get(key: string): Promise<Buffer>;
  remove(key: string): Promise<void>;
  signedUrl(key: string, options?: SignedUrlOptions): Promise<string>;
  healthy(): Promise<boolean>;
}

export function createS3Client(config: Config): S3Client {
  return new S3Client({
    endpoint: config.s3Endpoint,
    region: config.s3Region,
    forcePathStyle: true,
    credentials: { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey },
    maxAttempts: 2,
  });
}

export function createObjectStorage(config: Config, client: S3Client = createS3Client(config)): ObjectStorage {
  const bucket = config.s3Bucket;
  const unavailable = (err: unknown) =>
    errors.unavailable('STORAGE_UNAVAILABLE', `The document store is unavailable: ${(err as Error).message}. Nothing was charged.`);
  return {
    client,
    bucket,
    async put(key, body, contentType) {
      try {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType }));
      } catch (err) {
        throw unavailable(err);
      }
    },
    async get(key) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from(await out.Body!.transformToByteArray());
      } catch (err) {
        throw unavailable(err);
      }
    },
    async remove(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } catch (err) {
        throw unavailable(err);
      }
    },
    async signedUrl(key, { expiresInSeconds = SIGNED_URL_SECONDS, contentDisposition }: SignedUrlOptions = {}) {
      const command = new GetObjectCommand({ Bucket: bucket, Key: key, ResponseContentDisposition: contentDisposition });
      return getSignedUrl(client, command, { expiresIn: expiresInSeconds });
    },
    async healthy() {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
        return true;
      } catch {
        return false;
      }
    },
  };
}
