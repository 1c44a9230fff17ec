// Mounts RouteDefs on a koa-router: authentication, key-kind, scope and environment
// checks from domain/shared/access.ts, the shared rate limit, body parsing and zod validation,
// the instructions-version guard, then the handler. Routes stay a few lines each.
import { unlink } from 'node:fs/promises';
import Router from '@koa/router';
import type { Context } from 'koa';
import { BodyTooLargeError, JsonBodyError, readJsonBody } from './json-body';
import { parseMultipart, temporaryUploadPaths, uploadedFiles } from './multipart';
import { z } from 'zod';
import { Access, accessKey, ENDPOINT_ACCESS } from '../domain/shared/access';
import { ApiError, codedError, errors, FieldError } from '../domain/shared/errors';
import type { KeyKind } from '../domain/accounts/keys';
import { authenticate, AuthContext, isAgentKey } from '../services/accounts/auth';
import type { Deps } from '../services/shared/deps';
import { assertInstructionsVersion } from '../services/accounts/instructions';
import { consumeRateLimit } from '../services/shared/rate-limit';
import type { RouteDef } from './route';
import { withChallenge } from './bearer-challenge';

/** REST JSON bodies; the largest (a support message with 512 KiB of attachments as base64) needs about 700 KiB. */
export const JSON_BODY_LIMIT = 1024 * 1024;

export function zodFields(error: z.ZodError, prefix?: string): FieldError[] {
  return error.issues.map((issue) => ({
    path:
      [prefix, ...issue.path.map(String)].filter((p) => p !== undefined && p !== '').join('.') || (prefix ?? 'body'),
    message: issue.message,
  }));
}

export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, prefix?: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw errors.validation(zodFields(result.error, prefix));
  return result.data;
}

function kindRefusal(allowed: KeyKind[]): ApiError {
  const only = (kinds: KeyKind[]) => allowed.every((k) => kinds.includes(k));
  if (only(['member', 'member_test']))
    return errors.forbidden('member_key_required', 'This endpoint needs a member key (sk_live_).');
  if (only(['agent', 'agent_test']))
    return errors.forbidden(
      'agent_key_required',
      'This endpoint needs an agent-scoped key; member and facility keys cannot act as an agent.',
    );
  if (only(['facility']))
    return errors.forbidden('facility_key_required', 'This endpoint needs a facility key (sk_facility_).');
  return errors.forbidden('key_kind_not_allowed', 'This kind of key cannot call this endpoint.');
}

export function authorize(access: Access, auth: AuthContext, path: string): void {
  if (access.callers === 'public') return;
  if (!access.callers.includes(auth.kind)) {
    // The spec: agent credentials get 401 on /v1/api-keys.
    if (path.startsWith('/v1/api-keys') && isAgentKey(auth)) {
      throw errors.unauthorized('member_key_required', 'Agent credentials cannot manage member API keys.');
    }
    if (access.testOnly && !auth.testMode)
      throw errors.forbidden('test_key_required', 'This sandbox endpoint needs a test key.');
    throw kindRefusal(access.callers);
  }
  if (access.testOnly && !auth.testMode)
    throw errors.forbidden('test_key_required', 'This sandbox endpoint needs a test key.');
  if (access.liveOnly && auth.testMode) {
    throw errors.forbidden('live_key_required', 'Test keys cannot use this endpoint; use a live key.');
  }
  if (access.sandboxUnsupported && auth.testMode) {
    throw codedError(
      403,
      'sandbox_not_supported',
      'Physical inbound custody is live-only; test keys are not supported here.',
      {
        reason: 'sandbox_not_supported',
        suggestedAction: 'Use a live key (sk_live_ or sk_agent_); physical inbound custody has no sandbox.',
      },
    );
  }
  if (isAgentKey(auth)) {
    const missing = (access.scopes ?? []).filter((s) => !auth.scopes.has(s));
    const anyOk = !access.anyScope || access.anyScope.some((s) => auth.scopes.has(s));
    if (missing.length || !anyOk) {
      const needed = missing.length ? missing : access.anyScope!;
      throw new ApiError(403, `Missing scope: ${needed.join(missing.length ? ', ' : ' or ')}`, {
        reason: 'insufficient_scope',
        details: { required_scopes: needed },
      });
    }
  }
}

/**
 * The dot-path of the first string (or object key) holding a NUL character. Postgres text
 * cannot store NUL, so such input is refused here as a validation error rather than
 * failing later on insert with a 500.
 */
export function nulPath(value: unknown, prefix?: string): string | null {
  const pending: Array<[unknown, string | undefined]> = [[value, prefix]];
  while (pending.length) {
    const [v, path] = pending.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path ?? 'body';
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    for (const [k, child] of Object.entries(v)) {
      const childPath = path ? `${path}.${k}` : k;
      if (k.includes('\u0000')) return childPath;
      pending.push([child, childPath]);
    }
  }
  return null;
}

export function refuseNul(...parts: Array<[unknown, string | undefined]>): void {
  for (const [value, prefix] of parts) {
    const path = nulPath(value, prefix);
    if (path) throw errors.validation([{ path, message: 'must not contain NUL (\\u0000) characters' }]);
  }
}

/** A whole body over its route's limit: 413, before or instead of reading it. */
export function bodyTooLarge(err: BodyTooLargeError): ApiError {
  return codedError(413, 'BODY_TOO_LARGE', err.message, {
    retryable: false,
    fields: [{ path: 'body', message: err.message }],
    suggestedAction: 'Send a smaller body; the limits are in the API reference.',
  });
}

async function parseBody(route: RouteDef, ctx: Context): Promise<void> {
  if (!route.body && !route.multipart) return;
  const hasBody = ctx.request.length || ctx.get('transfer-encoding');
  try {
    if (route.multipart) {
      await parseMultipart(ctx, route.multipart);
    } else if (hasBody) {
      (ctx.request as unknown as { body: unknown }).body = await readJsonBody(ctx, JSON_BODY_LIMIT);
    }
  } catch (err) {
    if (err instanceof BodyTooLargeError) throw bodyTooLarge(err);
    if (err instanceof JsonBodyError) throw errors.validation([{ path: err.path, message: err.message }]);
    throw err;
  }
}

export function buildRouter(deps: Deps, routes: RouteDef[]): Router {
  const router = new Router();
  for (const route of routes) {
    const key = accessKey(route.method, route.path);
    const access = ENDPOINT_ACCESS[key];
    if (!access) throw new Error(`Route ${key} has no row in domain/shared/access.ts ENDPOINT_ACCESS`);
    const handle = async (ctx: Context) => {
      let auth: AuthContext | undefined;
      if (access.callers !== 'public') {
        const authorization = ctx.get('authorization') || undefined;
        const scopes = access.scopes ?? access.anyScope;
        try {
          auth = await authenticate(deps, authorization, 'rest');
        } catch (err) {
          throw withChallenge(err, deps.config, 'rest', authorization, scopes);
        }
        ctx.state.auth = auth;
        ctx.state.testMode = auth.testMode;
        await applyRateLimit(deps, ctx, `key:${auth.keyId}`, auth.rateLimitPerMinute ?? deps.config.rateLimitPerMinute);
        try {
          authorize(access, auth, route.path);
        } catch (err) {
          throw withChallenge(err, deps.config, 'rest', authorization, scopes);
        }
      } else if (access.ipRateLimit) {
        const limit =
          access.ipRateLimit === 'signup' ? deps.config.signupRateLimitPerMinute : deps.config.rateLimitPerMinute;
        await applyRateLimit(deps, ctx, `ip:${access.ipRateLimit}:${ctx.ip}`, limit);
      }

      await parseBody(route, ctx);
      refuseNul([ctx.params, 'params'], [ctx.query, 'query']);
      // JSON bodies were checked for NUL on their bytes (api/json-body.ts); form fields are few and flat.
      if (route.multipart) refuseNul([(ctx.request as unknown as { body?: unknown }).body, undefined]);
      const params = route.params ? parseOrThrow(route.params, ctx.params, 'params') : ctx.params;
      const query = route.query ? parseOrThrow(route.query, ctx.query, 'query') : ctx.query;
      const rawBody = (ctx.request as unknown as { body?: unknown }).body;
      const body = route.body ? parseOrThrow(route.body, rawBody ?? {}) : rawBody;
      const files = route.multipart ? uploadedFiles(ctx) : {};

      if (access.versionGuard && auth) {
        // Kept for the handler: a submission's event carries the instructions this check read.
        ctx.state.instructions = await assertInstructionsVersion(
          deps,
          auth,
          ctx.get('x-service-md-version') || undefined,
        );
      }

      const result = await route.handler({
        deps,
        auth: auth as AuthContext,
        params,
        query,
        body,
        files,
        headers: ctx.headers as Record<string, string | undefined>,
        ctx,
      });
      ctx.status = result.status ?? 200;
      // An error answer replayed from an Idempotency-Key record was stored without a request id:
      // like every error body, it carries the id of the request it answers.
      const answer = result.body as Record<string, unknown> | undefined;
      const replayedError =
        ctx.status >= 400 &&
        answer !== null &&
        typeof answer === 'object' &&
        !Array.isArray(answer) &&
        !('request_id' in answer);
      ctx.body = replayedError ? { ...answer, request_id: ctx.state.requestId } : result.body;
      for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
    };
    router[route.method](route.path, async (ctx: Context) => {
      try {
        await handle(ctx);
      } finally {
        // Handlers read uploads into memory or the object store; the parser's temp files go.
        if (route.multipart) await removeUploads(ctx);
      }
    });
  }
  return router;
}

async function removeUploads(ctx: Context): Promise<void> {
  await Promise.all(temporaryUploadPaths(ctx).map((p) => unlink(p).catch(() => undefined)));
}

export async function applyRateLimit(deps: Deps, ctx: Context, bucket: string, limit: number): Promise<void> {
  const r = await consumeRateLimit(deps, bucket, limit);
  ctx.set('X-RateLimit-Limit', String(r.limit));
  ctx.set('X-RateLimit-Remaining', String(r.remaining));
  ctx.set('X-RateLimit-Reset', String(r.resetSeconds));
  if (!r.allowed) {
    const per = r.windowSeconds === 60 ? 'minute' : `${r.windowSeconds} seconds`;
    throw codedError(429, 'RATE_LIMITED', `Rate limit of ${r.limit} requests per ${per} exceeded`, {
      retryable: true,
      suggestedAction: `Wait ${r.resetSeconds} seconds, then retry.`,
      headers: { 'Retry-After': String(r.resetSeconds) },
    });
  }
}
