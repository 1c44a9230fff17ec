// `npm run sdk:generate`: writes the OpenAPI document the app serves (built by the same
// builder, no server started) and generates both SDKs from it:
//   sdk/openapi.json                 the served document (OpenAPI 3.1)
//   sdk/typescript/src/generated/    @hey-api/openapi-ts, fetch client
//   sdk/go/openapi-3.0.json          the document converted to OpenAPI 3.0 (what oapi-codegen reads)
//   sdk/go/client.gen.go             oapi-codegen (types + client)
// `--out DIR` writes the same tree under DIR instead of the repository (the drift test
// regenerates into a temporary directory and compares). The hand-written layers beside the
// generated files are never touched.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Converter } from '@apiture/openapi-down-convert';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPI } from 'openapi-types';
import { loadConfig } from '../config';
import { buildOpenApi } from '../api/discovery/openapi';
import { allRoutes } from '../api/routes';
import { ensureTools, OAPI_CODEGEN_BIN, ROOT } from './stack';

/** The servers entry of the generated SDKs: a placeholder; every client is made with its own base URL. */
const SITE_URL = 'https://postal-mail.example';

type Json = Record<string, unknown>;

/** The served document, built with a fixed site URL so that generation does not depend on the environment. */
export function servedDocument(): Json {
  const config = loadConfig({ PORT: '0', SITE_URL, API_PREFIX: '/api' });
  return buildOpenApi(config, allRoutes) as Json;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * OpenAPI 3.1 to 3.0 for oapi-codegen: @apiture/openapi-down-convert turns `type: [x, 'null']`
 * into `nullable`, `examples` into `example` and drops the keywords 3.0 lacks; what it leaves is
 * finished here: `const` (which it leaves in property schemas) becomes a one-value enum,
 * `anyOf`/`oneOf` with a `{type: 'null'}`
 * branch becomes the other branch made nullable, a `$ref` with siblings is wrapped in `allOf`
 * (3.0 ignores a $ref's siblings), a list of several types becomes a schema of any type, and
 * numeric exclusive bounds become 3.0's booleans.
 */
export function toOpenApi30(doc: Json): Json {
  const converted = new Converter(structuredClone(doc), {
    allOfTransform: false,
    convertSchemaComments: false,
  }).convert() as Json;
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    let out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = visit(v);
    for (const key of ['anyOf', 'oneOf'] as const) {
      const branches = out[key];
      if (!Array.isArray(branches)) continue;
      const isNull = (b: unknown) =>
        isObject(b) && (b.type === 'null' || (b.nullable === true && Object.keys(b).length === 1));
      if (!branches.some(isNull)) continue;
      const rest = branches.filter((b) => !isNull(b));
      delete out[key];
      if (rest.length === 1) {
        const only = rest[0] as Json;
        out = only.$ref ? { ...out, allOf: [only], nullable: true } : { ...only, ...out, nullable: true };
      } else out = { ...out, [key]: rest, nullable: true };
    }
    if ('const' in out) {
      out.enum = [out.const];
      delete out.const;
    }
    if (Array.isArray(out.type)) {
      // Several types (a JSON-RPC id: string, integer or null): 3.0 has no such schema; any value.
      const types = out.type.filter((t) => t !== 'null');
      if (types.length < out.type.length) out.nullable = true;
      if (types.length === 1) out.type = types[0];
      else delete out.type;
    }
    if (out.type === 'null') {
      delete out.type;
      out.nullable = true;
      out.enum = [null];
    }
    if (typeof out.$ref === 'string' && Object.keys(out).length > 1) {
      const { $ref, ...siblings } = out;
      out = { ...siblings, allOf: [{ $ref }] };
    }
    if (typeof out.exclusiveMinimum === 'number') {
      out.minimum = out.exclusiveMinimum;
      out.exclusiveMinimum = true;
    }
    if (typeof out.exclusiveMaximum === 'number') {
      out.maximum = out.exclusiveMaximum;
      out.exclusiveMaximum = true;
    }
    if ('propertyNames' in out) delete out.propertyNames;
    return out;
  };
  const out = { ...(visit(converted) as Json), openapi: '3.0.3' };
  nameInlineTypesApart(out);
  return out;
}

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

/**
 * oapi-codegen names an inline enum property `<Schema><Property>`; where that is also the name
 * of a component (Rule.match beside RuleMatch) it gives up, so such a property's type is named
 * `<Schema><Property>Value` (x-go-type-name).
 */
function nameInlineTypesApart(doc: Json): void {
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  const names = new Set(Object.keys(schemas).map(pascal));
  for (const [name, schema] of Object.entries(schemas)) {
    for (const [prop, sub] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
      const generated = pascal(name) + pascal(prop);
      if (isObject(sub) && !sub.$ref && names.has(generated)) sub['x-go-type-name'] = `${generated}Value`;
    }
  }
}

async function generateTypeScript(spec: Json, outDir: string): Promise<void> {
  // @hey-api/openapi-ts is ESM only.
  const { createClient } = (await import('@hey-api/openapi-ts')) as typeof import('@hey-api/openapi-ts');
  rmSync(outDir, { recursive: true, force: true });
  await createClient({
    input: spec,
    output: { path: outDir, postProcess: [] },
    plugins: [
      { name: '@hey-api/client-fetch', throwOnError: true },
      '@hey-api/typescript',
      { name: '@hey-api/sdk', operations: { strategy: 'flat' } },
    ],
    logs: { level: 'silent' },
  } as Parameters<typeof createClient>[0]);
}

async function generateGo(spec30: Json, goDir: string): Promise<void> {
  await ensureTools({ temporal: false, s3: false, oapiCodegen: true }, (m) => console.log(`[sdk] ${m}`));
  const configPath = path.join(goDir, 'oapi-codegen.yaml');
  writeFileSync(
    configPath,
    [
      '# Written by scripts/sdk-generate.ts.',
      'package: postalmail',
      'output: client.gen.go',
      'generate:',
      '  models: true',
      '  client: true',
      'output-options:',
      '  skip-prune: true',
      '',
    ].join('\n'),
  );
  execFileSync(OAPI_CODEGEN_BIN, ['-config', 'oapi-codegen.yaml', 'openapi-3.0.json'], {
    cwd: goDir,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/** The POST paths (templates) that document an Idempotency-Key header: the SDKs send one on each call. */
export function idempotentPaths(doc: Json): string[] {
  const paths: string[] = [];
  for (const [p, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const post = item.post as { parameters?: Array<{ in?: string; name?: string }> } | undefined;
    if (post?.parameters?.some((x) => x.in === 'header' && x.name?.toLowerCase() === 'idempotency-key')) paths.push(p);
  }
  return paths.sort();
}

function writeIdempotentPaths(doc: Json, tsFile: string, goFile: string): void {
  const paths = idempotentPaths(doc);
  writeFileSync(
    tsFile,
    [
      '// Written by scripts/sdk-generate.ts from the OpenAPI document: the POST operations that accept an',
      '// Idempotency-Key header (path templates relative to the base URL).',
      'export const IDEMPOTENT_POST_PATHS: readonly string[] = [',
      ...paths.map((p) => `  '${p}',`),
      '];',
      '',
    ].join('\n'),
  );
  writeFileSync(
    goFile,
    [
      '// Code generated by scripts/sdk-generate.ts from the OpenAPI document. DO NOT EDIT.',
      '',
      'package postalmail',
      '',
      '// idempotentPostPaths are the POST operations that accept an Idempotency-Key header',
      '// (path templates relative to the base URL).',
      'var idempotentPostPaths = []string{',
      ...paths.map((p) => `\t"${p}",`),
      '}',
      '',
    ].join('\n'),
  );
}

export async function generate(root: string): Promise<void> {
  const doc = servedDocument();
  const sdkDir = path.join(root, 'sdk');
  const goDir = path.join(sdkDir, 'go');
  mkdirSync(goDir, { recursive: true });
  writeFileSync(path.join(sdkDir, 'openapi.json'), JSON.stringify(doc, null, 2) + '\n');
  const doc30 = toOpenApi30(doc);
  // What oapi-codegen reads must be a valid OpenAPI 3.0 document (validate() dereferences its argument).
  await SwaggerParser.validate(structuredClone(doc30) as unknown as OpenAPI.Document);
  writeFileSync(path.join(goDir, 'openapi-3.0.json'), JSON.stringify(doc30, null, 2) + '\n');
  await generateTypeScript(doc, path.join(sdkDir, 'typescript', 'src', 'generated'));
  await generateGo(doc30, goDir);
  writeIdempotentPaths(
    doc,
    path.join(sdkDir, 'typescript', 'src', 'generated', 'idempotent-paths.gen.ts'),
    path.join(goDir, 'idempotent.gen.go'),
  );
}

if (require.main === module) {
  const i = process.argv.indexOf('--out');
  const root = i > 0 ? path.resolve(process.argv[i + 1]) : ROOT;
  generate(root).then(
    () => console.log(`[sdk] generated under ${path.join(root, 'sdk')}`),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
