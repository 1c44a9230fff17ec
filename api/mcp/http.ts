// Mounts the MCP endpoint at {base_url}/mcp (Streamable HTTP, stateless, JSON responses).
// Each POST is authenticated with the same Bearer keys and per-key rate limit as REST
// (401/429 JSON bodies like REST), then handed to a fresh server + transport. GET and
// DELETE (SSE streams and sessions) do not exist in stateless mode: 405.
// The body is held to MCP_BODY_LIMIT and its bytes are checked against the JSON limits
// (depth, value count, NUL, free-form argument sizes) before anything parses it, so no
// request, however built, keeps the process busy; a problem inside a tool's arguments is
// answered like any other invalid tool input (isError with validation_error and fields).
import Router from '@koa/router';
import type { Context } from 'koa';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { errors } from '../../domain/shared/errors';
import { MAX_DOCUMENT_BYTES } from '../../domain/outbound-mail/documents';
import {
  dotPath,
  freeFormPaths,
  JsonInspection,
  JsonProblem,
  JsonScanLimits,
  MAX_FREE_FORM_JSON_BYTES,
  MAX_JSON_DEPTH,
  MAX_JSON_VALUES,
  oversizedFreeForm,
  spanAt,
} from '../../domain/shared/json-limits';
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
  problemField,
  readJsonBytes,
} from '../json-body';
import { applyRateLimit } from '../router';
import { withChallenge } from '../bearer-challenge';
import { errorResult } from './call';
import type { RegisteredTool } from './registry';
import { createMcpServer } from './server';
import { MCP_PROTOCOL_VERSIONS, registeredTools } from './tools';

/**
 * The largest request: send_outbound_mail with a 10 MB document as base64 (4 characters
 * per 3 bytes: 13,981,016), its metadata (16 KiB) and 64 KiB for every other argument and
 * the JSON-RPC envelope, so 14,062,936 bytes (13.4 MiB).
 */
export const MCP_BODY_LIMIT = Math.ceil(MAX_DOCUMENT_BYTES / 3) * 4 + MAX_FREE_FORM_JSON_BYTES + 64 * 1024;

/** A tool's arguments sit two levels down (request, params) and nest like a REST body. */
const MCP_JSON_LIMITS: JsonScanLimits = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_JSON_VALUES, envelopeDepth: 2 };
const ARGUMENTS = ['params', 'arguments'];
/** Read from the bytes even when the body is refused, to answer the request by its id. */
const ENVELOPE = [['id'], ['method']];

/** A JSON-RPC message as the answer: a string body, so no test_mode field is added to it (clients validate strictly). */
function jsonRpcAnswer(ctx: Context, status: number, message: Record<string, unknown>): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({ jsonrpc: '2.0', ...message });
}

function jsonRpcError(
  ctx: Context,
  status: number,
  code: number,
  message: string,
  opts: { data?: Record<string, unknown>; id?: unknown } = {},
): void {
  jsonRpcAnswer(ctx, status, {
    error: { code, message, ...(opts.data ? { data: opts.data } : {}) },
    id: opts.id ?? null,
  });
}

interface Envelope {
  id?: string | number;
  method?: string;
}

/** The request's id and method, from their bytes. */
function envelopeOf(raw: Buffer, inspection: JsonInspection): Envelope {
  const value = (path: string[]): unknown => {
    const span = spanAt(inspection, path);
    if (!span) return undefined;
    try {
      return JSON.parse(raw.toString('utf8', span.start, span.end));
    } catch {
      return undefined;
    }
  };
  const id = value(['id']);
  const method = value(['method']);
  return {
    id: typeof id === 'string' || typeof id === 'number' ? id : undefined,
    method: typeof method === 'string' ? method : undefined,
  };
}

/**
 * Requests after `initialize` carry the negotiated revision in MCP-Protocol-Version; an
 * unsupported one is a 400 that lists the revisions this server speaks. `initialize`
 * itself is never refused for its version: negotiation answers it (see server.ts).
 */
function unsupportedProtocolVersion(ctx: Context, envelope: Envelope): string | null {
  const version = ctx.get('mcp-protocol-version');
  return version && envelope.method !== 'initialize' && !MCP_PROTOCOL_VERSIONS.includes(version) ? version : null;
}

/**
 * A body over a JSON limit: inside a tools/call's arguments it is that tool's invalid
 * input (a result with isError and the REST validation body, naming the argument);
 * anywhere else the request itself is invalid (400, -32600).
 */
function refuseBody(ctx: Context, auth: AuthContext, problem: JsonProblem, envelope: Envelope): void {
  const inArguments = ARGUMENTS.every((k, i) => problem.path[i] === k) && problem.path.length > ARGUMENTS.length;
  if (inArguments && envelope.method === 'tools/call' && envelope.id !== undefined) {
    const refusal = errors.validation([{ path: problemField(problem, ARGUMENTS.length), message: problem.message }]);
    return jsonRpcAnswer(ctx, 200, { id: envelope.id, result: errorResult(refusal.status, refusal.toBody(), auth) });
  }
  jsonRpcError(ctx, 400, -32600, `Invalid Request: ${dotPath(problem.path, 'the request')} ${problem.message}`, {
    id: envelope.id,
  });
}

/**
 * 401s point MCP clients at the MCP server's protected-resource metadata (RFC 9728), where
 * an MCP host finds the authorization server to ask the owner's consent from.
 */
async function authenticateMcp(deps: Deps, ctx: Context): Promise<AuthContext> {
  const authorization = ctx.get('authorization') || undefined;
  try {
    return await authenticate(deps, authorization, 'mcp');
  } catch (err) {
    throw withChallenge(err, deps.config, 'mcp', authorization);
  }
}

export function mcpRoutes(deps: Deps, tools: RegisteredTool[] = registeredTools): Router {
  const router = new Router({ prefix: deps.config.apiPrefix });

  router.post('/mcp', async (ctx) => {
    const auth = await authenticateMcp(deps, ctx);
    ctx.state.auth = auth;
    ctx.state.testMode = auth.testMode;
    ctx.set('X-Test-Mode', String(auth.testMode));
    await applyRateLimit(deps, ctx, `key:${auth.keyId}`, auth.rateLimitPerMinute ?? deps.config.rateLimitPerMinute);
    let raw: Buffer;
    try {
      raw = await readJsonBytes(ctx, MCP_BODY_LIMIT);
      assertJsonContainer(raw);
    } catch (err) {
      if (err instanceof BodyTooLargeError)
        return jsonRpcError(ctx, 413, -32600, `Request body larger than ${formatBytes(MCP_BODY_LIMIT)}`);
      if (err instanceof JsonBodyError) return jsonRpcError(ctx, 400, -32700, `Parse error: ${err.message}`);
      throw err;
    }
    // The limits first: a refused body is never decoded nor parsed.
    const inspection = await inspectJsonInTurns(raw, MCP_JSON_LIMITS, freeFormPaths(ARGUMENTS), ENVELOPE);
    const envelope = envelopeOf(raw, inspection);
    const unsupported = unsupportedProtocolVersion(ctx, envelope);
    if (unsupported) {
      return jsonRpcError(
        ctx,
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${unsupported} (supported versions: ${MCP_PROTOCOL_VERSIONS.join(', ')})`,
        { data: { supported: MCP_PROTOCOL_VERSIONS, requested: unsupported } },
      );
    }
    const problem = inspection.problem ?? oversizedFreeForm(inspection, ARGUMENTS);
    if (problem) return refuseBody(ctx, auth, problem, envelope);
    // Decoding and parsing 14 MB take a while each: other requests get a turn in between.
    let body: unknown;
    try {
      await nextTurn();
      const text = jsonText(raw);
      await nextTurn();
      body = JSON.parse(text);
    } catch (err) {
      return jsonRpcError(
        ctx,
        400,
        -32700,
        `Parse error: ${err instanceof JsonBodyError ? err.message : 'the body is not JSON'}`,
      );
    }
    await nextTurn();

    const server = createMcpServer(deps, auth, tools);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, body);
  });

  const methodNotAllowed = (ctx: Context) => {
    ctx.set('Allow', 'POST');
    jsonRpcError(
      ctx,
      405,
      -32000,
      'Method not allowed: this MCP server is stateless; send JSON-RPC requests with POST.',
    );
  };
  router.get('/mcp', methodNotAllowed);
  router.delete('/mcp', methodNotAllowed);
  return router;
}
