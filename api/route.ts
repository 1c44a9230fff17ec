// Route definitions: one object per endpoint holds its zod schemas (which also feed the
// OpenAPI document and MCP tool schemas), and a thin handler that calls a service.
// Access rules come from domain/shared/access.ts, never from the route itself.
import type { Context } from 'koa';
import { z } from 'zod';
import type { AuthContext } from '../services/accounts/auth';
import type { Deps } from '../services/shared/deps';
import type { UploadedFile } from '../services/shared/uploads';

/** Routes name the services' upload type (services/shared/uploads.ts), so there is one definition. */
export type { UploadedFile };

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface MultipartSpec {
  /** Largest accepted file (bytes) per field; larger files get a 400 naming the field. */
  maxFileBytes: Record<string, number>;
}

export interface HandlerArgs<P, Q, B> {
  deps: Deps;
  /** Present on every route that is not public. */
  auth: AuthContext;
  params: P;
  query: Q;
  body: B;
  files: Record<string, UploadedFile>;
  headers: Record<string, string | undefined>;
  ctx: Context;
}

export interface RouteResult {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface ResponseSpec {
  description: string;
  /** The JSON body of a success; error statuses have none of their own. */
  schema?: z.ZodType;
  /**
   * A 409 that answers the spec's nested shape {error: {type, message, code}} (agent_name_taken):
   * 'nested' when it is the only 409, 'flat-or-nested' when the flat error shape is possible too.
   */
  errorShape?: 'nested' | 'flat-or-nested';
  /** The body is a file in its own content type (Content-Type and Content-Disposition name it), not JSON. */
  file?: true;
  /** Response headers the status sets: name -> description. */
  headers?: Record<string, string>;
}

export interface RouteDef<P = unknown, Q = unknown, B = unknown> {
  method: HttpMethod;
  /** Koa-router path under the API prefix, for example `/v1/mail/:id`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  multipart?: MultipartSpec;
  /**
   * Request headers documented in OpenAPI: name -> description, or the description and
   * the zod schema the handler reads the header with (so its bounds are advertised).
   */
  requestHeaders?: Record<string, string | { description: string; schema: z.ZodType }>;
  /**
   * What the handler answers. A success (2xx/3xx) gives its JSON body's schema, whose top level
   * has `test_mode` (spread `TestMode` from api/schemas/common.ts). An error status gives only
   * its description: its body is the error schema for the status (api/schemas/errors.ts). The
   * statuses the router answers itself (400, 401, 403, 409 of the instructions version, 413,
   * 429, 500) are added from the access row (api/discovery/statuses.ts); list them here only to
   * say more than the router's words.
   */
  responses: Record<number, ResponseSpec>;
  // A method, not a property: a list of routes with different P/Q/B is a RouteDef[] (methods
  // are checked bivariantly), and the router calls each with what its own schemas parsed.
  handler(args: HandlerArgs<P, Q, B>): Promise<RouteResult>;
}

export function defineRoute<P = Record<string, never>, Q = Record<string, never>, B = undefined>(
  def: RouteDef<P, Q, B>,
): RouteDef<P, Q, B> {
  return def;
}
