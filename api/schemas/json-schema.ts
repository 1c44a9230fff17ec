// How a zod schema becomes the JSON Schema that the OpenAPI document and the MCP tool
// listings advertise: the one conversion both use. zod describes the input side of a pipe
// by its first stage, so a number that is coerced first and bounded after
// (`formInt.pipe(z.number().int().min(1).max(200))`) was advertised with the first stage's
// bounds (any safe integer) instead of the ones enforced. Here a numeric pipe carries the
// tightest bounds of both of its sides.
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

type OverrideContext = { zodSchema: z.core.$ZodTypes; jsonSchema: z.core.JSONSchema.BaseSchema };

const isNumeric = (json: z.core.JSONSchema.BaseSchema) => json.type === 'integer' || json.type === 'number';

/** The larger lower bound and the smaller upper bound of two numeric schemas. */
function tighten(target: z.core.JSONSchema.BaseSchema, other: z.core.JSONSchema.BaseSchema): void {
  for (const key of ['minimum', 'exclusiveMinimum'] as const) {
    const value = other[key];
    if (typeof value === 'number')
      target[key] = typeof target[key] === 'number' ? Math.max(target[key] as number, value) : value;
  }
  for (const key of ['maximum', 'exclusiveMaximum'] as const) {
    const value = other[key];
    if (typeof value === 'number')
      target[key] = typeof target[key] === 'number' ? Math.min(target[key] as number, value) : value;
  }
  if (other.type === 'integer') target.type = 'integer';
}

function keepPipeBounds({ zodSchema, jsonSchema }: OverrideContext): void {
  const def = zodSchema._zod.def;
  if (def.type !== 'pipe' || !isNumeric(jsonSchema)) return;
  const output = z.toJSONSchema(def.out, { io: 'output', unrepresentable: 'any', target: 'draft-2020-12' });
  if (isNumeric(output)) tighten(jsonSchema, output);
}

/**
 * `metadata` replaces zod's global registry as the source of descriptions and ids: the OpenAPI
 * document passes one that adds component names (api/discovery/components.ts), so named
 * schemas come out as `$defs` and references.
 */
export function toJsonSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  metadata?: z.core.$ZodRegistry<Record<string, unknown>>,
): JsonSchema {
  const json = z.toJSONSchema(schema, {
    io,
    ...(metadata ? { metadata } : {}),
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: keepPipeBounds,
  }) as JsonSchema;
  delete json.$schema;
  return json;
}
