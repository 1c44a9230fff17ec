// The console's one way to read and change things: it runs the REST route definition
// itself (the access row's caller, scope and environment checks, the zod schemas of
// params, query and body, then the handler and so the same service call), as the signed-in
// member's live member key would over HTTP. No rule of the API is repeated here.
import type { Context } from 'koa';
import { ENDPOINT_ACCESS, accessKey } from '../../domain/shared/access';
import type { AuthContext } from '../../services/accounts/auth';
import type { Deps } from '../../services/shared/deps';
import { allRoutes } from '../routes';
import type { HttpMethod, RouteDef } from '../route';
import { authorize, parseOrThrow } from '../router';

const byKey = new Map<string, RouteDef>(allRoutes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r]));

export interface RestCall {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: unknown;
  headers?: Record<string, string | undefined>;
}

/** `operation` is the REST route as `METHOD /v1/path/:param`; answers the handler's status and body or throws its ApiError. */
export async function rest<T = Record<string, unknown>>(
  deps: Deps,
  auth: AuthContext,
  ctx: Context,
  operation: string,
  call: RestCall = {},
): Promise<{ status: number; body: T }> {
  const route = byKey.get(operation);
  if (!route) throw new Error(`no REST route ${operation}`);
  const access = ENDPOINT_ACCESS[accessKey(route.method as HttpMethod, route.path)];
  authorize(access, auth, route.path);
  const params = route.params ? parseOrThrow(route.params, call.params ?? {}, 'params') : (call.params ?? {});
  const query = route.query ? parseOrThrow(route.query, call.query ?? {}, 'query') : (call.query ?? {});
  const body = route.body ? parseOrThrow(route.body, call.body ?? {}) : call.body;
  const result = await route.handler({ deps, auth, params, query, body, files: {}, headers: call.headers ?? {}, ctx });
  return { status: result.status ?? 200, body: result.body as T };
}
