// Named component schemas of the OpenAPI document. Every zod object, enum or union exported
// by a module listed in SCHEMA_MODULES is a component under its export name: wherever a
// request or response schema uses it, the document says `$ref: '#/components/schemas/<Name>'`
// instead of repeating it inline, so generated clients get one named type per schema. A new
// `<area>.schemas.ts` module is added to the list below; export names must be unique across
// the listed modules (the document refuses to build otherwise).
//
// A schema renders differently as a request (zod's input: defaults make fields optional, no
// additionalProperties: false) and as a response (its output). A component used both ways
// whose two renderings differ is published twice: `<Name>` (the response) and `<Name>Input`.
import { z } from 'zod';
import { JsonSchema, toJsonSchema } from '../schemas/json-schema';
import * as common from '../schemas/common';
import * as errors from '../schemas/errors';
import * as agents from '../routes/accounts/agents.schemas';
import * as keys from '../routes/accounts/keys.schemas';
import * as publicSchemas from '../routes/accounts/public.schemas';
import * as batches from '../routes/batches/batches.schemas';
import * as inboundContext from '../routes/inbound-email/inbound-context.schemas';
import * as mailRuns from '../routes/mail-runs/mail-runs.schemas';
import * as mail from '../routes/outbound-mail/mail.schemas';
import * as notifications from '../routes/notifications/notifications.schemas';
import * as expectedShipments from '../routes/physical-inbound/expected-shipments.schemas';
import * as mailboxRules from '../routes/physical-inbound/mailbox-rules.schemas';
import * as physicalInbound from '../routes/physical-inbound/physical-inbound.schemas';
import * as webhooks from '../routes/webhooks/webhooks.schemas';
import * as templates from '../routes/templates/templates.schemas';
import * as support from '../routes/support/support';
import * as facilityMessages from '../routes/support/facility-messages';

/** The modules whose exported zod schemas are named components (module label -> module). */
export const SCHEMA_MODULES: Record<string, Record<string, unknown>> = {
  'api/schemas/common.ts': common,
  'api/schemas/errors.ts': errors,
  'api/routes/accounts/agents.schemas.ts': agents,
  'api/routes/accounts/keys.schemas.ts': keys,
  'api/routes/accounts/public.schemas.ts': publicSchemas,
  'api/routes/batches/batches.schemas.ts': batches,
  'api/routes/inbound-email/inbound-context.schemas.ts': inboundContext,
  'api/routes/mail-runs/mail-runs.schemas.ts': mailRuns,
  'api/routes/outbound-mail/mail.schemas.ts': mail,
  'api/routes/notifications/notifications.schemas.ts': notifications,
  'api/routes/physical-inbound/expected-shipments.schemas.ts': expectedShipments,
  'api/routes/physical-inbound/mailbox-rules.schemas.ts': mailboxRules,
  'api/routes/physical-inbound/physical-inbound.schemas.ts': physicalInbound,
  'api/routes/webhooks/webhooks.schemas.ts': webhooks,
  'api/routes/templates/templates.schemas.ts': templates,
  // Route modules that keep their schemas beside their routes.
  'api/routes/support/support.ts': support,
  'api/routes/support/facility-messages.ts': facilityMessages,
};

/** zod kinds that make a useful named type; strings, numbers and wrappers stay inline. */
const NAMED_KINDS = new Set(['object', 'enum', 'union', 'intersection', 'record']);

const REF = '#/components/schemas/';
const INPUT_MARK = '@input';

type Io = 'input' | 'output';

function isZod(value: unknown): value is z.ZodType {
  return value instanceof z.ZodType;
}

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
};
const defOf = (s: z.ZodType) => s._zod.def as unknown as Def;
const pascal = (key: string) =>
  key.replace(/(^|[_\-\s]+)([a-zA-Z0-9])/g, (_, __, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '');

/** The objects a schema holds directly, each with the name it would take under `parent` (key, array item). */
function children(schema: z.ZodType, parent: string): Array<[z.ZodType, string]> {
  const out: Array<[z.ZodType, string]> = [];
  const descend = (s: z.ZodType, name: string) => {
    const def = defOf(s);
    if (def.type === 'object') out.push([s, name]);
    else if (def.type === 'array') descend(def.element!, `${name}Item`);
    else if (def.innerType) descend(def.innerType, name);
    else if (def.type === 'union') def.options!.forEach((o) => descend(o, name));
    else if (def.type === 'pipe') descend(def.out!, name);
    else if (def.type === 'record') descend(def.valueType!, `${name}Value`);
  };
  const def = defOf(schema);
  if (def.type === 'object')
    for (const [key, value] of Object.entries(def.shape!)) descend(value, `${parent}${pascal(key)}`);
  else if (def.type === 'intersection') [def.left!, def.right!].forEach((s) => out.push(...children(s, parent)));
  else if (def.type === 'union') def.options!.forEach((s) => out.push(...children(s, parent)));
  return out;
}

/**
 * Schema instance -> component name: every object, enum or union exported by the listed modules
 * under its export name, and every object nested in one of them that is reached from more than
 * one place (a property schema shared by two components, or kept by `.extend()`) under the name of
 * its first parent and property (`InboundMailItemDraftContext`), so that it is written out once.
 * `roots` are further schemas (the routes' bodies) whose nested objects count as places too.
 */
export function componentNames(modules = SCHEMA_MODULES, roots: z.ZodType[] = []): Map<z.ZodType, string> {
  const names = explicitNames(modules);
  const taken = new Set(names.values());
  // Every (parent, property) edge once; a child reached by two edges is shared.
  const ids = new Map<z.ZodType, number>();
  const idOf = (s: z.ZodType) => ids.get(s) ?? (ids.set(s, ids.size), ids.size - 1);
  const parents = new Map<z.ZodType, Set<string>>();
  const firstName = new Map<z.ZodType, string>();
  const visited = new Set<z.ZodType>();
  const visit = (schema: z.ZodType, name: string | undefined) => {
    if (visited.has(schema)) return;
    visited.add(schema);
    for (const [child, childName] of children(schema, name ?? '')) {
      const set = parents.get(child) ?? new Set<string>();
      set.add(`${idOf(schema)} ${childName.slice((name ?? '').length)}`);
      parents.set(child, set);
      if (name && !firstName.has(child)) firstName.set(child, childName);
      visit(child, names.get(child) ?? (name ? childName : undefined));
    }
  };
  for (const [schema, name] of names) visit(schema, name);
  for (const root of roots) visit(root, names.get(root));
  for (const [child, set] of parents) {
    const name = firstName.get(child);
    if (set.size < 2 || names.has(child) || !name || taken.has(name)) continue;
    names.set(child, name);
    taken.add(name);
  }
  return names;
}

function explicitNames(modules: Record<string, Record<string, unknown>>): Map<z.ZodType, string> {
  const names = new Map<z.ZodType, string>();
  const owner = new Map<string, string>();
  for (const [label, mod] of Object.entries(modules)) {
    for (const [name, value] of Object.entries(mod)) {
      if (!isZod(value) || !NAMED_KINDS.has(value._zod.def.type)) continue;
      if (names.has(value)) continue; // re-exported under another name: the first name stays
      const other = owner.get(name);
      if (other) throw new Error(`OpenAPI component ${name} is exported by both ${other} and ${label}: rename one`);
      owner.set(name, label);
      names.set(value, name);
    }
  }
  return names;
}

function walk(value: unknown, visit: (node: Record<string, unknown>) => void): void {
  if (Array.isArray(value)) value.forEach((v) => walk(v, visit));
  else if (value && typeof value === 'object') {
    visit(value as Record<string, unknown>);
    Object.values(value).forEach((v) => walk(v, visit));
  }
}

function refsOf(schema: unknown): string[] {
  const refs: string[] = [];
  walk(schema, (node) => {
    if (typeof node.$ref === 'string' && node.$ref.startsWith(REF)) refs.push(node.$ref.slice(REF.length));
  });
  return refs;
}

/** Converts zod schemas to JSON Schema with named components referenced, collecting the components. */
export class ComponentCollector {
  private readonly names: Map<z.ZodType, string>;
  private readonly defs: Record<Io, Record<string, JsonSchema>> = { input: {}, output: {} };
  private readonly extra: Record<string, JsonSchema> = {};

  constructor(names = componentNames()) {
    this.names = names;
  }

  /** The name of a schema that is a component, if it is one. */
  nameOf(schema: z.ZodType): string | undefined {
    return this.names.get(schema);
  }

  /**
   * The JSON Schema of `schema`, with components as `$ref`s. `inlineRoot` keeps the root itself
   * inline even when it is a component (multipart forms, whose properties are extended).
   */
  convert(schema: z.ZodType, io: Io, opts: { inlineRoot?: boolean } = {}): JsonSchema {
    const names = this.names;
    const metadata = {
      get(s: z.ZodType) {
        const meta = z.globalRegistry.get(s);
        const id = opts.inlineRoot && s === schema ? undefined : names.get(s);
        return id ? { ...meta, id } : meta;
      },
    };
    const json = toJsonSchema(schema, io, metadata as never);
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    const rename = (node: unknown) =>
      walk(node, (n) => {
        if (typeof n.$ref !== 'string' || !n.$ref.startsWith('#/$defs/')) return;
        const name = decodeURIComponent(n.$ref.slice('#/$defs/'.length));
        if (name.startsWith('__schema'))
          throw new Error(`a recursive zod schema without a name reached the OpenAPI document (${name})`);
        n.$ref = `${REF}${name}${io === 'input' ? INPUT_MARK : ''}`;
      });
    rename(json);
    for (const [name, def] of Object.entries(defs)) {
      rename(def);
      const known = this.defs[io][name];
      if (known && JSON.stringify(known) !== JSON.stringify(def))
        throw new Error(`OpenAPI component ${name} renders two ways as ${io}`);
      this.defs[io][name] = def;
    }
    return json;
  }

  /** A component written as JSON Schema (not from zod), output only. */
  add(name: string, schema: JsonSchema): string {
    this.extra[name] = schema;
    return `${REF}${name}`;
  }

  /** Output rendering of a collected component (to read its properties). */
  outputSchema(name: string): JsonSchema | undefined {
    return this.defs.output[name] ?? this.extra[name];
  }

  /**
   * The components section, and the rewrite of every input reference in `doc` to its final
   * name: `<Name>` when the request rendering equals the response one (or there is no
   * response rendering), `<Name>Input` when they differ.
   */
  finish(doc: unknown): Record<string, JsonSchema> {
    const { input, output } = this.defs;
    const strip = (s: unknown) => JSON.stringify(s).replaceAll(INPUT_MARK, '');
    // A name differs when its own rendering does, or when it references one that differs.
    const differs = new Set(Object.keys(input).filter((n) => output[n] && strip(input[n]) !== strip(output[n])));
    for (let changed = true; changed;) {
      changed = false;
      for (const n of Object.keys(input)) {
        if (differs.has(n) || !output[n]) continue;
        if (refsOf(input[n]).some((r) => differs.has(r.replace(INPUT_MARK, '')))) {
          differs.add(n);
          changed = true;
        }
      }
    }
    const finalName = (n: string) => (differs.has(n) ? `${n}Input` : n);
    const schemas: Record<string, JsonSchema> = { ...output, ...this.extra };
    for (const [n, def] of Object.entries(input)) {
      const target = finalName(n);
      if (target !== n && (output[target] || this.extra[target]))
        throw new Error(`OpenAPI component ${target} clashes with the request rendering of ${n}`);
      if (!schemas[target]) schemas[target] = def;
    }
    const rewrite = (node: unknown) =>
      walk(node, (n) => {
        if (typeof n.$ref === 'string' && n.$ref.endsWith(INPUT_MARK))
          n.$ref = `${REF}${finalName(n.$ref.slice(REF.length, -INPUT_MARK.length))}`;
      });
    rewrite(doc);
    rewrite(schemas);
    return Object.fromEntries(
      Object.keys(schemas)
        .sort()
        .map((k) => [k, schemas[k]]),
    );
  }
}
