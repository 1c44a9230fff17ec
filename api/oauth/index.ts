// The OAuth endpoints at the site root for MCP hosts: POST /oauth/register (RFC 7591),
// POST /oauth/token (authorization code + PKCE, refresh) and POST /oauth/revoke (RFC 7009).
// The authorization endpoint is the console's consent page (api/console/pages/oauth.ts).
// Bodies are bounded; answers are JSON text with Cache-Control: no-store, refusals the RFC
// 6749 shape {error, error_description}. Browser-based clients may call them (CORS, no
// cookies involved).
import Router from '@koa/router';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { OAuthRefusal, refuse } from '../../domain/accounts/oauth';
import { describeIssues } from '../../domain/accounts/oauth-metadata';
import { ApiError } from '../../domain/shared/errors';
import type { Deps } from '../../services/shared/deps';
import { registerClient } from '../../services/accounts/oauth-clients';
import { exchangeToken, revokeToken } from '../../services/accounts/oauth';
import { consumeRateLimit } from '../../services/shared/rate-limit';
import { BodyTooLargeError, JsonBodyError, readJsonBody } from '../json-body';
import { RegistrationRequest } from './oauth.schemas';

import { OAUTH_PATHS } from './paths';

export { OAUTH_PATHS };

/** A registration is a few redirect URIs and names; a token or revocation request a few parameters. */
export const OAUTH_BODY_LIMIT = 16 * 1024;

function answer(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  // A string body: the test_mode marker adds nothing to OAuth documents.
  ctx.body = JSON.stringify(body);
}

function refused(ctx: Context, refusal: OAuthRefusal, headers: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(headers)) ctx.set(k, v);
  answer(ctx, refusal.status, refusal.toBody());
}

/** A form body (application/x-www-form-urlencoded, as RFC 6749 has it); a parameter sent twice is refused (3.2). */
async function readForm(ctx: Context): Promise<Record<string, string>> {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw refuse.invalidRequest('Send the parameters as application/x-www-form-urlencoded');
  let text: string;
  try {
    text = await getRawBody(ctx.req, {
      limit: OAUTH_BODY_LIMIT,
      encoding: 'utf8',
      length: ctx.get('content-length') || undefined,
    });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large')
      throw new OAuthRefusal('invalid_request', `The body is larger than ${OAUTH_BODY_LIMIT} bytes`, 413);
    throw refuse.invalidRequest('The body could not be read');
  }
  const form = new URLSearchParams(text);
  const out: Record<string, string> = {};
  for (const [k, v] of form) {
    if (k in out) throw refuse.invalidRequest(`${k} is sent more than once`);
    if (v.includes('\u0000')) throw refuse.invalidRequest(`${k} contains a NUL character`);
    out[k] = v;
  }
  return out;
}

async function limited(deps: Deps, ctx: Context, bucket: string, limit: number): Promise<boolean> {
  const r = await consumeRateLimit(deps, bucket, limit);
  if (r.allowed) return false;
  refused(ctx, new OAuthRefusal('too_many_requests', `More than ${limit} requests per minute from this address`, 429), {
    'Retry-After': String(r.resetSeconds),
  });
  return true;
}

export function oauthRoutes(deps: Deps): Router {
  const router = new Router();

  const handle =
    (run: (ctx: Context) => Promise<void>) =>
    async (ctx: Context): Promise<void> => {
      ctx.set('Access-Control-Allow-Origin', '*');
      try {
        await run(ctx);
      } catch (err) {
        if (err instanceof OAuthRefusal) return refused(ctx, err);
        if (err instanceof ApiError && err.status === 503) {
          return refused(ctx, new OAuthRefusal('temporarily_unavailable', err.message, 503));
        }
        deps.log.error({ err, path: ctx.path }, 'oauth endpoint failed');
        refused(ctx, new OAuthRefusal('server_error', `Internal error (${ctx.state.requestId})`, 500));
      }
    };

  const preflight = (ctx: Context) => {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version');
    ctx.set('Access-Control-Max-Age', '600');
    ctx.status = 204;
  };
  for (const p of Object.values(OAUTH_PATHS)) router.options(p, preflight);

  router.post(
    OAUTH_PATHS.register,
    handle(async (ctx) => {
      if (await limited(deps, ctx, `ip:oauth-register:${ctx.ip}`, deps.config.oauthRegistrationRateLimitPerMinute))
        return;
      let raw: unknown;
      try {
        raw = await readJsonBody(ctx, OAUTH_BODY_LIMIT);
      } catch (err) {
        if (err instanceof BodyTooLargeError)
          throw new OAuthRefusal('invalid_client_metadata', `The body is larger than ${OAUTH_BODY_LIMIT} bytes`, 413);
        if (err instanceof JsonBodyError)
          throw refuse.invalidClientMetadata(`The body is not a JSON object: ${err.message}`);
        throw err;
      }
      const parsed = RegistrationRequest.safeParse(raw ?? {});
      if (!parsed.success) {
        const onRedirects = parsed.error.issues.some((i) => i.path[0] === 'redirect_uris');
        const description = describeIssues(parsed.error);
        throw onRedirects ? refuse.invalidRedirectUri(description) : refuse.invalidClientMetadata(description);
      }
      answer(ctx, 201, await registerClient(deps, parsed.data, ctx.ip));
    }),
  );

  router.post(
    OAUTH_PATHS.token,
    handle(async (ctx) => {
      const form = await readForm(ctx);
      answer(ctx, 200, await exchangeToken(deps, form, ctx.ip));
    }),
  );

  router.post(
    OAUTH_PATHS.revoke,
    handle(async (ctx) => {
      const form = await readForm(ctx);
      await revokeToken(deps, form, ctx.ip);
      answer(ctx, 200, {});
    }),
  );
  return router;
}
