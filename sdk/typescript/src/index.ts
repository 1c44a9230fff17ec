// Postal Mail API SDK for TypeScript: the operations generated from the OpenAPI document
// (./generated, by @hey-api/openapi-ts) and the hand-written layer beside them.
export * from './generated/sdk.gen';
export type * from './generated/types.gen';
export { createPostalMailClient, type PostalMailOptions } from './client';
export * from './errors';
export { document, contentTypeOf, type DocumentSource, type DocumentOptions } from './documents';
export { retryAfterMs, retryDelayMs, acceptsIdempotencyKey, type RetryOptions } from './retry';
export {
  verifyStandardWebhook,
  verifyAgentWebhook,
  WebhookSignatureError,
  WEBHOOK_TOLERANCE_SECONDS,
  type AgentWebhookSignature,
} from './webhooks';
