// Every request field the API advertises, beside the zod schema that validates it: each
// route's path parameters, query parameters, parsed headers and body properties as the
// OpenAPI document shows them, and each MCP tool's input properties as tools/list shows them. Nested
// objects and array items are walked too (paths like `ranges.items.from`).
import type { z } from 'zod';
import { loadConfig } from '../../config';
import { buildOpenApi } from '../../api/discovery/openapi';
import { allRoutes } from '../../api/routes';
import { registeredTools } from '../../api/mcp/tools';

export type JsonSchema = Record<string, any>;

export interface RequestField {
  /** `POST /v1/mail body`, `GET /v1/mail query`, `MCP send_outbound_mail`, ... */
  where: string;
  /** Dot path of the field in its request part. */
  path: string;
  /** The zod schema that validates this field on its own. */
  zod: z.ZodType;
  /** What the document advertises for it. */
  json: JsonSchema;
}

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  options?: z.ZodType[];
};
const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;
const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch']);

/** The object or array a field holds, looking through wrappers and the output side of pipes. */
function container(
  schema: z.ZodType,
): { kind: 'object'; shape: Record<string, z.ZodType> } | { kind: 'array'; element: z.ZodType } | null {
  const def = defOf(schema);
  if (def.type === 'object') return { kind: 'object', shape: def.shape! };
  if (def.type === 'array') return { kind: 'array', element: def.element! };
  if (WRAPPERS.has(def.type)) return container(def.innerType!);
  if (def.type === 'pipe') return container(def.out!) ?? container(def.in!);
  return null;
}

/** Whether a field takes a number anywhere (through wrappers, pipes and unions). */
export function takesNumber(schema: z.ZodType): boolean {
  const def = defOf(schema);
  if (def.type === 'number') return true;
  if (WRAPPERS.has(def.type)) return takesNumber(def.innerType!);
  if (def.type === 'pipe') return takesNumber(def.in!) || takesNumber(def.out!);
  if (def.type === 'union') return def.options!.some(takesNumber);
  return false;
}

/** The non-null branch of an advertised schema (`anyOf: [X, {type: null}]` or `type: [t, 'null']`). */
export function nonNull(json: JsonSchema): JsonSchema {
  const branches = (json.anyOf ?? json.oneOf) as JsonSchema[] | undefined;
  if (branches) {
    const real = branches.filter((b) => b.type !== 'null');
    if (real.length === 1) return { ...json, ...nonNull(real[0]), anyOf: undefined, oneOf: undefined };
  }
  if (Array.isArray(json.type)) {
    const types = json.type.filter((t: string) => t !== 'null');
    if (types.length === 1) return { ...json, type: types[0] };
  }
  return json;
}

/** Named schemas are components of the document: a `$ref` stands for the schema it names. */
let components: Record<string, JsonSchema> = {};
function deref(json: JsonSchema | undefined): JsonSchema | undefined {
  if (!json?.$ref) return json;
  return deref(components[String(json.$ref).replace('#/components/schemas/', '')]);
}

function walk(
  where: string,
  prefix: string,
  shape: Record<string, z.ZodType>,
  properties: Record<string, JsonSchema>,
  out: RequestField[],
): void {
  for (const [name, zod] of Object.entries(shape)) {
    const json = deref(properties[name]);
    const path = prefix ? `${prefix}.${name}` : name;
    if (!json) continue;
    out.push({ where, path, zod, json });
    const inner = container(zod);
    const advertised = deref(nonNull(json))!;
    if (inner?.kind === 'object' && advertised.properties) walk(where, path, inner.shape, advertised.properties, out);
    if (inner?.kind === 'array' && advertised.items) {
      const element = container(inner.element);
      const items = deref(nonNull(deref(advertised.items)!))!;
      out.push({ where, path: `${path}.items`, zod: inner.element, json: items });
      if (element?.kind === 'object' && items.properties)
        walk(where, `${path}.items`, element.shape, items.properties, out);
    }
  }
}

const shapeOf = (schema: unknown) => (schema ? container(schema as z.ZodType) : null);

export function requestFields(): RequestField[] {
  const doc = buildOpenApi(loadConfig({ ...process.env, PORT: '0' }), allRoutes) as JsonSchema;
  components = doc.components.schemas;
  const out: RequestField[] = [];
  for (const route of allRoutes) {
    const op = doc.paths[route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')][route.method];
    const label = `${route.method.toUpperCase()} ${route.path}`;
    for (const part of ['path', 'query'] as const) {
      const schema = shapeOf(part === 'path' ? route.params : route.query);
      if (schema?.kind !== 'object') continue;
      const properties = Object.fromEntries(
        (op.parameters as JsonSchema[]).filter((p) => p.in === part).map((p) => [p.name, p.schema]),
      );
      walk(`${label} ${part}`, '', schema.shape, properties, out);
    }
    const headerSchemas = Object.fromEntries(
      Object.entries(route.requestHeaders ?? {}).flatMap(([name, h]) =>
        typeof h === 'string' ? [] : [[name, h.schema]],
      ),
    );
    const headers = Object.fromEntries(
      (op.parameters as JsonSchema[]).filter((p) => p.in === 'header').map((p) => [p.name, p.schema]),
    );
    walk(`${label} header`, '', headerSchemas, headers, out);
    const body = shapeOf(route.body);
    const content = op.requestBody?.content as Record<string, { schema: JsonSchema }> | undefined;
    if (body?.kind === 'object' && content) {
      for (const [type, { schema }] of Object.entries(content))
        walk(`${label} body (${type})`, '', body.shape, deref(schema)!.properties ?? {}, out);
    }
  }
  for (const tool of registeredTools) {
    walk(
      `MCP ${tool.name}`,
      '',
      tool.input.shape,
      (tool.listing.inputSchema.properties ?? {}) as Record<string, JsonSchema>,
      out,
    );
  }
  return out;
}
