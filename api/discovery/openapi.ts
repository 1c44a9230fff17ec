// The OpenAPI 3.1 document, generated from the same RouteDefs and zod schemas that validate
// requests, and from the access table, so it cannot drift from the code:
// - schemas exported by the modules in api/discovery/components.ts are named components;
// - every error status has the one error schema of api/schemas/errors.ts (402 and 409 its
//   extensions), never a route's own;
// - the statuses the router answers itself (401, 403, 429, ...) come from the route's access
//   row (api/discovery/statuses.ts), not from each route;
// - every JSON answer carries test_mode (api/middleware/request-context.ts), so a success
//   schema without it is refused here.
// test/contract/ checks every response the test suites receive against this document.
import YAML from 'yaml';
import type { Config } from '../../config';
import { Access, accessKey, ENDPOINT_ACCESS } from '../../domain/shared/access';
import type { ResponseSpec, RouteDef } from '../route';
import { JsonSchema, toJsonSchema } from '../schemas/json-schema';
import { ConflictErrorBody, ErrorBody, InsufficientCreditsErrorBody, NestedErrorBody } from '../schemas/errors';
import { multipartBodyLimit } from '../multipart';
import { JSON_BODY_LIMIT } from '../router';
import { agentSurfacePaths } from './surfaces';
import { ComponentCollector, componentNames } from './components';
import { routerStatuses } from './statuses';

export const API_VERSION = '1.0.0';

/** The reference of the error schema for `status` (api/schemas/errors.ts). */
export function errorSchemaFor(
  components: ComponentCollector,
  status: number,
  shape?: ResponseSpec['errorShape'],
): JsonSchema {
  if (status === 402) return components.convert(InsufficientCreditsErrorBody, 'output');
  if (status === 409 && shape === 'nested') return components.convert(NestedErrorBody, 'output');
  if (status === 409 && shape === 'flat-or-nested')
    return {
      anyOf: [components.convert(ConflictErrorBody, 'output'), components.convert(NestedErrorBody, 'output')],
    };
  if (status === 409) return components.convert(ConflictErrorBody, 'output');
  return components.convert(ErrorBody, 'output');
}

/** Headers the router sets on an error status. */
export function errorHeaders(status: number): Record<string, JsonSchema> | undefined {
  if (status === 429)
    return {
      'Retry-After': {
        description: 'Seconds until the rate limit window resets',
        required: true,
        schema: { type: 'integer', minimum: 0 },
      },
    };
  if (status === 401)
    return {
      'WWW-Authenticate': {
        description: 'Bearer challenge naming the protected-resource metadata (RFC 9728)',
        schema: { type: 'string' },
      },
    };
  return undefined;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export function operationIdOf(method: string, path: string): string {
  return `${method}${openApiPath(path)
    .replace(/[{}]/g, '')
    .split(/[/-]/)
    .filter(Boolean)
    .map((s) => s[0].toUpperCase() + s.slice(1))
    .join('')}`;
}

function parameters(route: RouteDef): JsonSchema[] {
  const out: JsonSchema[] = [];
  const pathParams = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  const paramSchema = route.params ? toJsonSchema(route.params, 'input') : undefined;
  for (const name of pathParams) {
    const props = (paramSchema?.properties ?? {}) as Record<string, JsonSchema>;
    out.push({ name, in: 'path', required: true, schema: props[name] ?? { type: 'string' } });
  }
  if (route.query) {
    const q = toJsonSchema(route.query, 'input');
    const required = new Set((q.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((q.properties ?? {}) as Record<string, JsonSchema>)) {
      out.push({
        name,
        in: 'query',
        required: required.has(name),
        schema,
        ...(schema.description ? { description: schema.description } : {}),
      });
    }
  }
  for (const [name, header] of Object.entries(route.requestHeaders ?? {})) {
    const described =
      typeof header === 'string'
        ? { description: header, schema: { type: 'string' } }
        : { description: header.description, schema: toJsonSchema(header.schema, 'input') };
    out.push({ name, in: 'header', required: false, ...described });
  }
  return out;
}

function requestBody(route: RouteDef, components: ComponentCollector): JsonSchema | undefined {
  if (route.multipart) {
    const base = route.body
      ? components.convert(route.body, 'input', { inlineRoot: true })
      : { type: 'object', properties: {} };
    const properties = { ...((base.properties ?? {}) as Record<string, JsonSchema>) };
    for (const field of Object.keys(route.multipart.maxFileBytes)) {
      properties[field] = {
        type: 'string',
        format: 'binary',
        description: `File, at most ${route.multipart.maxFileBytes[field]} bytes`,
      };
    }
    return { required: true, content: { 'multipart/form-data': { schema: { ...base, properties } } } };
  }
  if (!route.body) return undefined;
  return { required: true, content: { 'application/json': { schema: components.convert(route.body, 'input') } } };
}

/** A JSON success body whose top level lacks test_mode (the marker adds it to every answer) is a problem. */
function testModeProblems(components: ComponentCollector, schema: JsonSchema, where: string): string[] {
  const problems: string[] = [];
  const branches = (schema.anyOf ?? schema.oneOf ?? [schema]) as JsonSchema[];
  for (const branch of branches) {
    const ref = typeof branch.$ref === 'string' ? branch.$ref.split('/').pop()! : undefined;
    const resolved = ref ? components.outputSchema(ref) : branch;
    if (!resolved || resolved.type !== 'object') continue;
    if (!(resolved.properties as JsonSchema | undefined)?.test_mode)
      problems.push(`${where}: the body schema${ref ? ` ${ref}` : ''} has no test_mode`);
  }
  return problems;
}

function responsesOf(
  route: RouteDef,
  access: Access,
  components: ComponentCollector,
  problems: string[],
): Record<string, JsonSchema> {
  const where = `${route.method.toUpperCase()} ${route.path}`;
  const bodyLimit = route.multipart ? multipartBodyLimit(route.multipart) : route.body ? JSON_BODY_LIMIT : null;
  const generic = routerStatuses(route, access, bodyLimit);
  const statuses = [...new Set([...Object.keys(route.responses), ...Object.keys(generic)].map(Number))].sort(
    (a, b) => a - b,
  );
  const responses: Record<string, JsonSchema> = {};
  for (const status of statuses) {
    const own = route.responses[status] as ResponseSpec | undefined;
    const description = own?.description ?? generic[status];
    let content: JsonSchema | undefined;
    let headers: Record<string, JsonSchema> | undefined = errorHeaders(status);
    if (status >= 400) {
      if (own?.schema)
        throw new Error(
          `${where} ${status}: error statuses take no schema of their own; the document gives them the error schema of api/schemas/errors.ts`,
        );
      content = { 'application/json': { schema: errorSchemaFor(components, status, own?.errorShape) } };
    } else if (own?.file) {
      content = { '*/*': { schema: { type: 'string', format: 'binary' } } };
    } else if (own?.schema) {
      const schema = components.convert(own.schema, 'output');
      problems.push(...testModeProblems(components, schema, `${where} ${status}`));
      content = { 'application/json': { schema } };
    }
    if (own?.headers) {
      headers = { ...headers };
      for (const [name, text] of Object.entries(own.headers))
        headers[name] = { description: text, required: true, schema: { type: 'string' } };
    }
    responses[status] = { description, ...(headers ? { headers } : {}), ...(content ? { content } : {}) };
  }
  return responses;
}

export function buildOpenApi(config: Config, routes: RouteDef[]): JsonSchema {
  const roots = routes.flatMap((r) => [
    ...(r.body ? [r.body] : []),
    ...Object.values(r.responses as Record<number, ResponseSpec>).flatMap((x) => (x.schema ? [x.schema] : [])),
  ]);
  const components = new ComponentCollector(componentNames(undefined, roots));
  const problems: string[] = [];
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const access = ENDPOINT_ACCESS[accessKey(route.method, route.path)];
    if (!access) throw new Error(`Route ${accessKey(route.method, route.path)} has no row in ENDPOINT_ACCESS`);
    const p = openApiPath(route.path);
    const op: JsonSchema = {
      operationId: operationIdOf(route.method, route.path),
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: route.tags,
      parameters: parameters(route),
      responses: responsesOf(route, access, components, problems),
      security: access.callers !== 'public' ? [{ bearerAuth: [] }] : [],
      'x-access': access,
    };
    const body = requestBody(route, components);
    if (body) op.requestBody = body;
    (paths[p] ??= {})[route.method] = op;
  }
  if (problems.length)
    throw new Error(
      `Every JSON answer carries test_mode (api/middleware/request-context.ts): spread TestMode from ` +
        `api/schemas/common.ts into these body schemas:\n${problems.join('\n')}`,
    );
  // The MCP and A2A endpoints and the site-root documents sit beside the REST routes.
  const allPaths = { ...paths, ...agentSurfacePaths(config, components) };
  const operationIds = new Map<string, string>();
  const tags = new Set<string>();
  for (const [p, item] of Object.entries(allPaths)) {
    for (const [method, op] of Object.entries(item as Record<string, JsonSchema>)) {
      if (typeof op !== 'object' || !op || !('operationId' in op)) continue;
      const id = op.operationId as string;
      const other = operationIds.get(id);
      if (other) throw new Error(`operationId ${id} of ${method.toUpperCase()} ${p} is also ${other}'s`);
      operationIds.set(id, `${method.toUpperCase()} ${p}`);
      for (const t of (op.tags as string[] | undefined) ?? []) tags.add(t);
    }
  }
  const doc: JsonSchema = {
    openapi: '3.1.0',
    info: {
      title: 'Postal Mail API',
      version: API_VERSION,
      description:
        'Send and receive physical mail from software agents: letters, postcards and batches printed and posted by a licensed facility, paid from prepaid credits, with a sandbox for test keys. ' +
        'Every response carries X-Request-Id and X-Test-Mode, and every JSON answer `test_mode`; every refusal has the ErrorBody shape (402 and 409 add fields).',
    },
    servers: [{ url: config.baseUrl }],
    security: [{ bearerAuth: [] }],
    tags: [...tags].sort().map((name) => ({ name })),
    paths: allPaths,
  };
  doc.components = {
    securitySchemes: {
      bearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description:
          'sk_live_ (member), sk_test_ (member test), sk_agent_ (agent), sk_agent_test_ (agent test), sk_facility_ (facility), or an OAuth access token oauth_at_ (acts as the agent credential of its grant; see /.well-known/oauth-authorization-server)',
      },
    },
    schemas: components.finish(doc),
  };
  return doc;
}

export function openApiYaml(doc: JsonSchema): string {
  return YAML.stringify(doc, { aliasDuplicateObjects: false });
}
