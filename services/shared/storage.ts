// Object storage for documents, templates, CSVs, photos, scans and raw emails, on any
// S3-compatible store. Failures become a retryable 503 so callers never half-commit.
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
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
    // Off: with the SDK's default, a body over 2 MB is sent with "Expect: 100-continue",
    // and the SDK's handler opens a fresh connection (keep-alive off) for each such request.
    expectContinueHeader: false,
    // A checksum only where the operation requires one (DeleteObjects), not the CRC32 the SDK
    // adds to every PutObject by default: put() sends a Buffer or string, whose SHA-256 the
    // signature already carries (x-amz-content-sha256) and the store verifies, so the CRC32
    // was a second pass over the body (~0.3 ms of a 1 KB letter's ~0.9 ms PutObject).
    requestChecksumCalculation: 'WHEN_REQUIRED',
    // Connections are kept and reused (the SDK's own defaults, stated so they do not
    // drift); 50 sockets is well above the API's and the worker's concurrency.
    requestHandler: { httpAgent: { keepAlive: true, maxSockets: 50 }, httpsAgent: { keepAlive: true, maxSockets: 50 } },
  });
}

export function createObjectStorage(config: Config, client: S3Client = createS3Client(config)): ObjectStorage {
  const bucket = config.s3Bucket;
  const unavailable = (err: unknown) =>
    errors.unavailable(
      'STORAGE_UNAVAILABLE',
      `The document store is unavailable: ${(err as Error).message}. Nothing was charged.`,
    );
  const presignGet = createGetPresigner(config, client);
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
      return presignGet(key, { expiresInSeconds, contentDisposition });
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

type PresignableRequest = Parameters<S3RequestPresigner['presign']>[0];

/**
 * Signs GET URLs with one presigner per storage. The SDK's getSignedUrl builds a presigner
 * and runs the whole command stack for every URL (about 1 ms each, measured in
 * bench/cpu.ts); the request it signs is always the same shape for a path-style bucket,
 * so it is built here directly. The URL is byte-for-byte what getSignedUrl produces for
 * the same signing time (test/unit/signed-url.test.ts).
 */
export function createGetPresigner(config: Config, client: S3Client) {
  const endpoint = new URL(config.s3Endpoint);
  const presigner = new S3RequestPresigner({ ...client.config, signingName: 's3', region: config.s3Region });
  const bucketPath = `${endpoint.pathname.replace(/\/+$/, '')}/${encodeS3Segment(config.s3Bucket)}`;
  return async (
    key: string,
    options: { expiresInSeconds: number; contentDisposition?: string; signingDate?: Date },
  ) => {
    const query: Record<string, string> = { 'x-id': 'GetObject', 'x-amz-checksum-mode': 'ENABLED' };
    if (options.contentDisposition !== undefined) query['response-content-disposition'] = options.contentDisposition;
    const request: PresignableRequest = {
      method: 'GET',
      protocol: endpoint.protocol,
      hostname: endpoint.hostname,
      port: endpoint.port ? Number(endpoint.port) : undefined,
      path: `${bucketPath}/${key.split('/').map(encodeS3Segment).join('/')}`,
      query,
      headers: { host: endpoint.host },
    };
    const signed = await presigner.presign(request, {
      expiresIn: options.expiresInSeconds,
      signingRegion: config.s3Region,
      signingService: 's3',
      ...(options.signingDate ? { signingDate: options.signingDate } : {}),
    });
    return formatSignedUrl(signed);
  };
}

// The SDK's own escaping for path segments and query values: encodeURIComponent plus the
// characters it leaves alone but SigV4 requires escaped.
function encodeS3Segment(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function formatSignedUrl(request: PresignableRequest): string {
  const query = Object.keys(request.query ?? {})
    .sort()
    .map((name) => {
      const value = request.query![name];
      return `${encodeS3Segment(name)}=${encodeS3Segment(String(value))}`;
    })
    .join('&');
  const port = request.port ? `:${request.port}` : '';
  return `${request.protocol}//${request.hostname}${port}${request.path}${query ? `?${query}` : ''}`;
}
