// Documented statuses that a test could produce but none does yet: known gaps of the contract
// check, printed on every full run (they do not fail it), to be moved out of here as tests reach
// them. A status no test can produce on demand belongs in test/contract/unproducible.ts instead.

/** Why a group of statuses is not reached yet, and what a test needs to reach it. */
const IDEMPOTENCY_REUSED =
  'IDEMPOTENCY_KEY_REUSED: a first request that succeeds, then the same Idempotency-Key with another body';

/** `METHOD /path/{template} STATUS` -> what a test needs to produce it. */
export const UNCOVERED: Record<string, string> = {
  'GET /v1/inbound-items 503':
    'SEARCH_UNAVAILABLE: the search of managed items failing (a fault of Postgres full-text search while the list still answers)',
  'POST /v1/expected-shipments 422': IDEMPOTENCY_REUSED,
  'POST /v1/mail/{id}/approve 422': IDEMPOTENCY_REUSED,
  'POST /v1/support/conversations/{id}/messages 422': IDEMPOTENCY_REUSED,
  'POST /v1/test/mail 422': IDEMPOTENCY_REUSED,
  'GET /console/oauth/authorize 429':
    'needs more client metadata documents fetched from one address than the per-address budget allows',
  'POST /oauth/token 429':
    'needs more client metadata documents fetched from one address than the per-address budget allows',
  'POST /v1/batch-mail 409': 'multipart: a duplicate batch, or a stale X-Service-MD-Version with a full batch form',
  'POST /v1/inbound-items/{id}/actions 402': 'an open-and-scan request by a member without credits on a live item',
  'POST /v1/mail/{id}/reject 409': 'rejecting a piece that is no longer pending approval (MAIL_NOT_PENDING_APPROVAL)',
};
