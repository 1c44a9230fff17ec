// Mounts the A2A server at {base_url}/a2a (JSON-RPC 2.0 over POST, protocol 0.3). Each
// request is authenticated with the same Bearer keys and per-key rate limit as REST
// (401/429 bodies like REST; 401 points at the protected-resource metadata), held to a
// body limit and to the JSON limits of REST bodies before anything parses it, then handed
// to the SDK's JsonRpcTransportHandler over a request handler bound to the caller's key.
// Answers are JSON-RPC messages with HTTP 200, as the A2A JSON-RPC binding has them.
import Router from '@koa/router';
import type { Context } from 'koa';
import { JsonRpcTransportHandler } from '@a2a-js/sdk/server';
import { ApiError } from '../../domain/shared/errors';
import { dotPath, JSON_BODY_LIMITS, MAX_JSON_DEPTH, MAX_JSON_VALUES } from '../../domain/shared/json-limits';
import { authenticate, AuthContext } from '../../services/accounts/auth';
import type { Deps } from '../../services/shared/deps';
import {
  assertJsonContainer,
  BodyTooLargeError,
  formatBytes,
  inspectJsonInTurns,
  JsonBodyError,
  jsonText,
  nextTurn,
  readJsonBytes,
} from '../json-body';
import { applyRateLimit } from '../router';
import { buildAgentCard } from '../discovery/metadata';
import { A2A_PATH } from '../discovery/documents';
import { PostalA2AHandler } from './handler';
import { A2A_BODY_LIMIT } from './limits';

export { A2A_BODY_LIMIT };

/** A DataPart's fields sit five levels down (request, params, message, parts, [n], data). */
const A2A_JSON_LIMITS = { ...JSON_BODY_LIMITS, envelopeDepth: 6 };

function answer(ctx: Context, status: number, message: Record<string, unknown>): void {
  ctx.status = status;
  ctx.type = 'application/json';
  // A string body, so no test_mode field is added to the JSON-RPC message.
  ctx.body = JSON.stringify({ jsonrpc: '2.0', ...message });
}

function rpcError(ctx: Context, status: number, code: number, message: string): void {
  answer(ctx, status, { id: null, error: { code, message } });
}

async function authenticateA2a(deps: Deps, ctx: Context): Promise<AuthContext> {
  try {
    return await authenticate(deps, ctx.get('authorization') || undefined);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      throw new ApiError(401, err.message, {
        ...err.options,
        headers: {
          'WWW-Authenticate': `Bearer resource_metadata="${deps.config.siteUrl}/.well-known/oauth-protected-resource"`,
        },
      });
    }
    throw err;
  }
}

export function a2aRoutes(deps: Deps): Router {
  const router = new Router({ prefix: deps.config.apiPrefix });

  router.post(A2A_PATH, async (ctx) => {
    const auth = await authenticateA2a(deps, ctx);
    ctx.state.auth = auth;
    ctx.state.testMode = auth.testMode;
    ctx.set('X-Test-Mode', String(auth.testMode));
    await applyRateLimit(deps, ctx, `key:${auth.keyId}`, auth.rateLimitPerMinute ?? deps.config.rateLimitPerMinute);
    let raw: Buffer;
    try {
      raw = await readJsonBytes(ctx, A2A_BODY_LIMIT);
      assertJsonContainer(raw);
    } catch (err) {
      if (err instanceof BodyTooLargeError)
        return rpcError(ctx, 413, -32600, `Request body larger than ${formatBytes(A2A_BODY_LIMIT)}`);
      if (err instanceof JsonBodyError) return rpcError(ctx, 200, -32700, `Parse error: ${err.message}`);
      throw err;
    }
    const inspection = await inspectJsonInTurns(raw, A2A_JSON_LIMITS);
    if (inspection.problem)
      return rpcError(
        ctx,
        200,
        -32600,
        `Invalid Request: ${dotPath(inspection.problem.path, 'the request')} ${inspection.problem.message} ` +
          `(at most ${MAX_JSON_DEPTH} levels and ${MAX_JSON_VALUES} values)`,
      );
    let body: unknown;
    try {
      await nextTurn();
      const text = jsonText(raw);
      await nextTurn();
      body = JSON.parse(text);
    } catch (err) {
      return rpcError(ctx, 200, -32700, `Parse error: ${err instanceof JsonBodyError ? err.message : 'not JSON'}`);
    }
    await nextTurn();
    const handler = new PostalA2AHandler(
      deps,
      auth,
      buildAgentCard(deps.config),
      ctx.get('x-service-md-version') || undefined,
    );
    const result = await new JsonRpcTransportHandler(handler).handle(body);
    // Streaming methods are refused for a card without streaming, so every answer is one message.
    if (Symbol.asyncIterator in (result as object)) return rpcError(ctx, 200, -32004, 'Streaming is not supported');
    answer(ctx, 200, result as unknown as Record<string, unknown>);
  });

  const methodNotAllowed = (ctx: Context) => {
    ctx.set('Allow', 'POST');
    rpcError(ctx, 405, -32600, 'Method not allowed: send A2A JSON-RPC requests with POST.');
  };
  router.get(A2A_PATH, methodNotAllowed);
  router.delete(A2A_PATH, methodNotAllowed);
  return router;
}
