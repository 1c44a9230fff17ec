// One MCP tool = one small declaration: its input (the REST route's zod request schema),
// the access row of the equivalent REST route (so key kinds, scopes and guards are
// identical), whether it mutates, and a handler that calls the same service function
// as REST and returns the JSON the REST route returns. Group and deprecation come from
// the catalog in tools/index.ts, the one list of the 45 tool names.
import { z } from 'zod';
import type { AuthContext } from '../../services/accounts/auth';
import type { Deps } from '../../services/shared/deps';
import type { McpToolName } from './catalog';
import { PG_INT_MAX } from '../schemas/common';

/** Any zod object schema: whatever its fields, and strict or not. */
export type ToolInputSchema = z.ZodObject<Record<string, z.ZodType>, z.core.$ZodObjectConfig>;

export interface ToolDeclaration<I extends ToolInputSchema = ToolInputSchema> {
  name: McpToolName;
  description: string;
  /** The input, reusing the REST route's request schema (body, query and path ids merged). */
  input: I;
  /** The ENDPOINT_ACCESS key of the equivalent REST route, e.g. 'POST /v1/facility-messages'. */
  access: string;
  /** Mutations take `idempotency_key` and are recorded under operation `mcp:<name>`. */
  mutation?: boolean;
  /** Irreversible effects (cancel, discard): a hint for clients that ask before calling. */
  destructive?: boolean;
  /**
   * 'service': the service function keeps its own idempotency record (for example in the
   * same transaction as a debit); the handler passes `call.idempotencyKey` on instead of
   * the framework wrapping the call.
   */
  idempotency?: 'framework' | 'service';
  /** Returns the REST body, or a RestOutcome when the service answers with a status. */
  handler(deps: Deps, auth: AuthContext, input: z.output<I>, call: ToolCall): Promise<unknown>;
}

export interface ToolCall {
  idempotencyKey?: string;
  /** `mcp:<tool>`: the idempotency operation of this tool. */
  operation: string;
}

/** A service answer with its HTTP status (201, 200 for a dry run, or a replayed refusal). */
export class RestOutcome {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

export function defineTool<I extends ToolInputSchema>(def: ToolDeclaration<I>): ToolDeclaration {
  return def as unknown as ToolDeclaration;
}

/** Fields the framework adds to every mutation's input. */
export const IDEMPOTENCY_KEY_FIELD = z
  .string()
  .min(1)
  .max(255)
  .describe('A retry with the same key and input returns the first result without a second effect.');

/** For tools whose service demands a key (REST: Idempotency-Key required). */
export const REQUIRED_IDEMPOTENCY_KEY = { idempotency_key: IDEMPOTENCY_KEY_FIELD };

export const SERVICE_MD_VERSION_FIELD = z.coerce
  .number()
  .int()
  .positive()
  .max(PG_INT_MAX)
  .describe(
    'Agent keys: the current version of your instructions document (GET it with get_service_md); stale versions are refused.',
  );
