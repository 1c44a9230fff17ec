// The client factory: the generated fetch client with a base URL, the API key as bearer token,
// retries (retry.ts) and refusals thrown as ApiError subclasses (errors.ts).
import { createClient, createConfig, type Client } from './generated/client';
import { apiError, type ApiErrorBody } from './errors';
import { retryingFetch, type RetryOptions } from './retry';

export interface PostalMailOptions {
  /** The API base URL, with its prefix: `https://host/api`. */
  baseUrl: string;
  /** sk_live_, sk_test_, sk_agent_, sk_agent_test_, sk_facility_ or an oauth_at_ token. */
  apiKey: string;
  /** Agent keys: the instructions version sent as X-Service-MD-Version on every call (default '1'). */
  serviceMdVersion?: string | null;
  retry?: RetryOptions;
  /** The fetch to send with (default globalThis.fetch). */
  fetch?: typeof fetch;
  headers?: Record<string, string>;
}

/**
 * A client for the generated operations: `const { data } = await postV1Mail({ client, body })`.
 * Every refusal (4xx/5xx) is thrown as an ApiError subclass; 429 and 503 are retried first.
 */
export function createPostalMailClient(opts: PostalMailOptions): Client {
  const baseUrl = opts.baseUrl.replace(/\/$/, '');
  const client = createClient(
    createConfig({
      baseUrl,
      auth: () => opts.apiKey,
      fetch: retryingFetch(baseUrl, { ...opts.retry, fetch: opts.fetch }) as typeof fetch,
      throwOnError: true,
      headers: {
        ...(opts.serviceMdVersion === null ? {} : { 'X-Service-MD-Version': opts.serviceMdVersion ?? '1' }),
        ...opts.headers,
      },
    }),
  );
  client.interceptors.error.use((error, response) =>
    response ? apiError(response.status, error as ApiErrorBody | string | undefined, response.headers) : error,
  );
  return client;
}
