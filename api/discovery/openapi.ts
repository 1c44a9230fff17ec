// The OpenAPI 3.1 document, generated from the same RouteDefs and zod schemas that
// validate requests, and from the access table, so it cannot drift from the code.
import YAML from 'yaml';
import type { Config } from '../../config';
import { accessKey, ENDPOINT_ACCESS } from '../../domain/shared/access';
import type { RouteDef } from '../route';
import { JsonSchema, toJsonSchema } from '../schemas/json-schema';
import { multipartBodyLimit } from '../multipart';
import { JSON_BODY_LIMIT } from '../router';
import { agentSurfacePaths } from './surfaces';

export const API_VERSION = '1.0.0';

const ErrorSchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'string' },
    code: { type: 'string' },
    reason: {
      type: 'string',
      description:
        'On 401/403: token_missing, token_malformed, token_prefix_unknown, key_not_found, key_revoked, key_expired, member_suspended, facility_inactive, token_audience_mismatch, insufficient_scope, live_key_required, sandbox_not_supported, ...',
    },
    fields: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: { path: { type: 'string' }, message: { type: 'string' } },
      },
    },
    retryable: { type: 'boolean' },
    suggested_action: { type: 'string' },
    details: { type: 'object' },
    request_id: { type: 'string' },
    test_mode: { type: 'boolean' },
  },
};

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
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

function requestBody(route: RouteDef): JsonSchema | undefined {
  if (route.multipart) {
    const base = route.body ? toJsonSchema(route.body, 'input') : { type: 'object', properties: {} };
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
  return { required: true, content: { 'application/json': { schema: toJsonSchema(route.body, 'input') } } };
}

export function buildOpenApi(config: Config, routes: RouteDef[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const access = ENDPOINT_ACCESS[accessKey(route.method, route.path)];
    const p = openApiPath(route.path);
    const responses: Record<string, JsonSchema> = {};
    for (const [status, r] of Object.entries(route.responses)) {
      responses[status] = r.schema
        ? { description: r.description, content: { 'application/json': { schema: toJsonSchema(r.schema, 'output') } } }
        : {
            description: r.description,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
          };
    }
    const op: JsonSchema = {
      operationId: `${route.method}${p
        .replace(/[{}]/g, '')
        .split(/[/-]/)
        .filter(Boolean)
        .map((s) => s[0].toUpperCase() + s.slice(1))
        .join('')}`,
      summary: route.summary,
      tags: route.tags,
      parameters: parameters(route),
      responses,
      'x-access': access,
    };
    if (route.description) op.description = route.description;
    const body = requestBody(route);
    if (body) {
      op.requestBody = body;
      const limit = route.multipart ? multipartBodyLimit(route.multipart) : JSON_BODY_LIMIT;
      responses['413'] ??= {
        description: `BODY_TOO_LARGE: the body is larger than ${limit} bytes; nothing was read or stored`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    if (access && access.callers !== 'public') op.security = [{ bearerAuth: [] }];
    else op.security = [];
    (paths[p] ??= {})[route.method] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Postal Mail API',
      version: API_VERSION,
      description:
        'Send and receive physical mail from software agents: letters, postcards and batches printed and posted by a licensed facility, paid from prepaid credits, with a sandbox for test keys.',
    },
    servers: [{ url: config.baseUrl }],
    security: [{ bearerAuth: [] }],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'sk_live_ (member), sk_test_ (member test), sk_agent_ (agent), sk_agent_test_ (agent test), sk_facility_ (facility), or an OAuth access token oauth_at_ (acts as the agent credential of its grant; see /.well-known/oauth-authorization-server)',
        },
      },
      schemas: { Error: ErrorSchema },
    },
    // The MCP endpoint and the site-root documents sit beside the REST routes.
    paths: { ...paths, ...agentSurfacePaths(config) },
  };
}

export function openApiYaml(doc: JsonSchema): string {
  return YAML.stringify(doc, { aliasDuplicateObjects: false });
}
