// Idempotency-Key on routes: the first answer to a key is stored and replayed to retries
// (services/shared/idempotency.ts); the key is handed to the service so that a workflow step it
// sends is the same Temporal Update on every retry (services/shared/workflow-gateway.ts), which
// covers an answer lost after the workflow applied the step but before it was stored.
import type { HandlerArgs, RouteResult } from './route';
import { requestFingerprint, runIdempotent } from '../services/shared/idempotency';
import { sha256Hex } from '../domain/accounts/keys';
import { uploadBytes } from '../services/shared/uploads';

/** OpenAPI text of the optional header on routes that use idempotentRoute. */
export const IDEMPOTENCY_KEY_HEADER = {
  'Idempotency-Key':
    'Optional (1-255 visible ASCII characters). A retry with the same key and body returns the first answer and applies nothing twice, ' +
    'also when the first answer was lost; the same key with another body is refused (422 IDEMPOTENCY_KEY_REUSED).',
};

/** What a request is, for "same key, same request": its path parameters, body and uploaded files' bytes. */
async function fingerprint(args: HandlerArgs<unknown, unknown, unknown>): Promise<string> {
  const files: Record<string, string> = {};
  for (const [field, file] of Object.entries(args.files ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    files[field] = sha256Hex(await uploadBytes(file));
  }
  // Without files, the shape records kept before uploads were fingerprinted.
  return requestFingerprint(
    Object.keys(files).length
      ? { params: args.params, body: args.body ?? null, files }
      : { params: args.params, body: args.body },
  );
}

/**
 * Runs a mutating route once per (caller, operation, Idempotency-Key) when the header is
 * sent; `fn` gets the key so the service can derive its workflow Update id from it.
 */
export async function idempotentRoute(
  args: HandlerArgs<unknown, unknown, unknown>,
  operation: string,
  fn: (idempotencyKey: string | undefined) => Promise<RouteResult>,
): Promise<RouteResult> {
  const key = args.headers['idempotency-key'];
  const r = await runIdempotent(
    args.deps,
    args.auth,
    { operation, key, fingerprint: await fingerprint(args) },
    async () => {
      const out = await fn(key);
      return { status: out.status ?? 200, body: out.body };
    },
  );
  return { status: r.status, body: r.body, headers: r.headers };
}
