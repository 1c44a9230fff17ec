// Signed download URLs built with one reused presigner match, byte for byte, what the
// SDK's getSignedUrl produces for the same key, disposition and signing time.
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { loadConfig } from '../../config';
import { createGetPresigner, createS3Client } from '../../services/shared/storage';

const signingDate = new Date('2026-03-04T05:06:07Z');

describe.each([
  ['http://127.0.0.1:9100', 'documents'],
  ['https://objects.example.com:8443/base/', 'mail-bucket'],
])('signed GET URLs on %s', (s3Endpoint, s3Bucket) => {
  const config = { ...loadConfig({}), s3Endpoint, s3Bucket, s3AccessKeyId: 'AKIDEXAMPLE', s3SecretAccessKey: 'secret' };
  const client = createS3Client(config);
  const presign = createGetPresigner(config, client);
  afterAll(() => client.destroy());

  it.each([
    ['accounts/acc_1/documents/doc_1.pdf', undefined],
    [
      "odd keys/with spaces+plus/é (1)!*'.pdf",
      'attachment; filename="Brief an Müller (2).pdf"; filename*=UTF-8\'\'Brief%20an%20M%C3%BCller.pdf',
    ],
  ])('key %s', async (key, contentDisposition) => {
    const expected = await getSignedUrl(
      client,
      new GetObjectCommand({ Bucket: s3Bucket, Key: key, ResponseContentDisposition: contentDisposition }),
      {
        expiresIn: 600,
        signingDate,
      },
    );
    expect(await presign(key, { expiresInSeconds: 600, contentDisposition, signingDate })).toBe(expected);
  });
});
