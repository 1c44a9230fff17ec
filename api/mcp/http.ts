// Mounts the MCP endpoint at {base_url}/mcp (Streamable HTTP, stateless, JSON responses).
// Each POST is authenticated with the same Bearer keys and per-key rate limit as REST
// (401/429 JSON bodies like REST), then handed to a fresh server + transport. GET and
// DELETE (SSE streams and sessions) do not exist in stateless mode: 405.
import Router from '@koa/router';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ApiError } from '../../domain/errors';
import { authenticate, AuthContext } from '../../services/auth';
import type { Deps } from '../../services/deps';
import { applyRateLimit } from '../router';
import type { RegisteredTool } from './registry';
import { createMcpServer } from './server';
import { MCP_PROTOCOL_VERSIONS, registeredTools } from './tools';

/** send_outbound_mail carries a document of up to 10 MB as base64. */
export const MCP_BODY_LIMIT = '15mb';

const parseJson = koaBody({ json: true, jsonLimit: MCP_BODY_LIMIT, multipart: false, urlencoded: false, text: false, jsonStrict: true });

function jsonRpcError(ctx: Context, status: number, code: number, message: string, data?: Record<string, unknown>): void {
  ctx.status = status;
  ctx.body = { jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null };
}

/**
 * Requests after `initialize` carry the negotiated revision in MCP-Protocol-Version; an
 * unsupported one is a 400 that lists the revisions this server speaks. `initialize`
 * itself is never refused for its version: negotiation answers it (see server.ts).
 */
function unsupportedProtocolVersion(ctx: Context, message: unknown): string | null {
  const version = ctx.get('mcp-protocol-version');
  const initialize = (message as { method?: unknown } | null)?.method === 'initialize';
  return version && !initialize && !MCP_PROTOCOL_VERSIONS.includes(version) ? version : null;
}

/** 401s point MCP clients at the protected-resource metadata (RFC 9728). */
async function authenticateMcp(deps: Deps, ctx: Context): Promise<AuthContext> {
  try {
    return await authenticate(deps, ctx.get('authorization') || undefined);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      throw new ApiError(401, err.message, {
        ...err.options,
        headers: { 'WWW-Authenticate': `Bearer resource_metadata="${deps.config.siteUrl}/.well-known/oauth-protected-resource"` },
      });
    }
    throw err;
  }
}

export function mcpRoutes(deps: Deps, tools: RegisteredTool[] = registeredTools): Router {
  const router = new Router({ prefix: deps.config.apiPrefix });

  router.post('/mcp', async (ctx) => {
    const auth = await authenticateMcp(deps, ctx);
    ctx.state.auth = auth;
    ctx.state.testMode = auth.testMode;
    await applyRateLimit(deps, ctx, `key:${auth.keyId}`, auth.rateLimitPerMinute ?? deps.config.rateLimitPerMinute);
    try {
      await parseJson(ctx, async () => undefined);
    } catch (err) {
      const tooLarge = (err as { status?: number }).status === 413;
      return jsonRpcError(ctx, tooLarge ? 413 : 400, -32700, tooLarge ? `Request body larger than ${MCP_BODY_LIMIT}` : 'Parse error: the body is not JSON');
    }
    const body = (ctx.request as unknown as { body?: unknown }).body;
    const unsupported = unsupportedProtocolVersion(ctx, body);
    if (unsupported) {
      return jsonRpcError(ctx, 400, -32000, `Bad Request: Unsupported protocol version: ${unsupported} (supported versions: ${MCP_PROTOCOL_VERSIONS.join(', ')})`,
        { supported: MCP_PROTOCOL_VERSIONS, requested: unsupported });
    }

    const server = createMcpServer(deps, auth, tools);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    ctx.set('X-Test-Mode', String(auth.testMode));
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, body);
  });

  const methodNotAllowed = (ctx: Context) => {
    ctx.set('Allow', 'POST');
    jsonRpcError(ctx, 405, -32000, 'Method not allowed: this MCP server is stateless; send JSON-RPC requests with POST.');
  };
  router.get('/mcp', methodNotAllowed);
  router.delete('/mcp', methodNotAllowed);
  return router;
}
