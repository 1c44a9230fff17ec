// Runs one tools/call the way the REST router runs a request: key kind, scope and
// environment checks from the access row, zod validation, the instructions-version
// guard, idempotency for mutations, then the handler. The arguments' bytes were already
// held to the JSON limits (depth, size, NUL characters) by http.ts. Results carry the REST JSON in
// structuredContent.result; refusals become isError results whose text starts with the
// error code or reason (for example `live_key_required: ...`).
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../../domain/shared/errors';
import type { AuthContext } from '../../services/accounts/auth';
import type { Deps } from '../../services/shared/deps';
import { requestFingerprint, runIdempotent } from '../../services/shared/idempotency';
import { assertInstructionsVersion } from '../../services/accounts/instructions';
import { authorize, parseOrThrow } from '../router';
import type { RegisteredTool } from './registry';
import { RestOutcome } from './tool';

type Body = Record<string, unknown>;

/** REST bodies carry test_mode on every JSON object; tool results do too. */
function withTestMode(result: unknown, auth: AuthContext): unknown {
  if (result && typeof result === 'object' && !Array.isArray(result) && !('test_mode' in result)) {
    return { ...(result as Body), test_mode: auth.testMode };
  }
  return result;
}

function success(result: unknown): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: { result } };
}

/** `<code or reason>: <message>`, plus the fields of a validation error. */
export function errorText(status: number, body: Body): string {
  const nested = body.error && typeof body.error === 'object' ? (body.error as Body) : undefined;
  const message = String(nested ? nested.message : (body.error ?? 'Request failed'));
  const fields = Array.isArray(body.fields) ? (body.fields as Array<{ path: string; message: string }>) : [];
  const label = (body.code ??
    nested?.code ??
    body.reason ??
    (fields.length ? 'validation_error' : `http_${status}`)) as string;
  const detail = fields.length ? ` (${fields.map((f) => `${f.path}: ${f.message}`).join('; ')})` : '';
  return `${label}: ${message}${detail}`;
}

export function errorResult(status: number, body: Body, auth?: AuthContext): CallToolResult {
  const error = { ...body, ...(auth ? { test_mode: auth.testMode } : {}) };
  return {
    isError: true,
    content: [{ type: 'text', text: errorText(status, body) }],
    structuredContent: { error, status },
  };
}

export async function callTool(
  deps: Deps,
  auth: AuthContext,
  tool: RegisteredTool,
  args: unknown,
): Promise<CallToolResult> {
  try {
    authorize(tool.access, auth, tool.accessPath);
    // The framework's own fields never reach the handler, so handlers see the REST input.
    const {
      idempotency_key: key,
      service_md_version: version,
      ...input
    } = parseOrThrow(tool.input, args ?? {}) as Body;
    if (tool.versionGuard) await assertInstructionsVersion(deps, auth, version as number | undefined);
    const call = { idempotencyKey: key as string | undefined, operation: `mcp:${tool.name}` };
    const run = async () => {
      const out = await tool.declaration.handler(deps, auth, input, call);
      return out instanceof RestOutcome
        ? { status: out.status, body: withTestMode(out.body, auth) }
        : { status: 200, body: withTestMode(out, auth) };
    };
    const r =
      tool.mutation && tool.declaration.idempotency !== 'service'
        ? await runIdempotent(
            deps,
            auth,
            { operation: call.operation, key: call.idempotencyKey, fingerprint: requestFingerprint(input) },
            run,
          )
        : await run();
    // A replayed refusal comes back as its status and body.
    if (r.status >= 400) return errorResult(r.status, r.body as Body, auth);
    return success(r.body);
  } catch (err) {
    if (err instanceof ApiError) return errorResult(err.status, err.toBody(), auth);
    deps.log.error({ err, tool: tool.name }, 'mcp tool failed');
    return errorResult(
      500,
      {
        error: 'Internal error',
        code: 'INTERNAL',
        retryable: true,
        suggested_action: 'Retry later.',
      },
      auth,
    );
  }
}
