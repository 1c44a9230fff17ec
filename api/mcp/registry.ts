// Turns tool declarations into served tools: merges the catalog entry (group,
// deprecation), adds the framework's input fields (idempotency_key on mutations,
// service_md_version where the REST route guards the instructions version), generates
// the JSON Schema from zod, and checks every declaration against the catalog and the
// access table at startup, as the REST router does.
import { z } from 'zod';
import { Access, ENDPOINT_ACCESS } from '../../domain/shared/access';
import { IDEMPOTENCY_KEY_FIELD, SERVICE_MD_VERSION_FIELD, ToolDeclaration, ToolInputSchema } from './tool';
import { toJsonSchema } from '../schemas/json-schema';
import type { CatalogEntry } from './catalog';

export type { CatalogEntry };

/** The MCP `Tool` object as tools/list returns it. */
export interface ToolListing {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint: boolean;
  };
  _meta: Record<string, unknown>;
}

export interface RegisteredTool {
  name: string;
  group: string;
  deprecated?: { successor: string };
  declaration: ToolDeclaration;
  access: Access;
  /** Path part of the access key; the router's checks use it (e.g. /v1/api-keys rules). */
  accessPath: string;
  mutation: boolean;
  versionGuard: boolean;
  /** The declaration's input plus the framework fields. */
  input: ToolInputSchema;
  listing: ToolListing;
}

function titleOf(name: string): string {
  const words = name.split('_');
  return [words[0][0].toUpperCase() + words[0].slice(1), ...words.slice(1)].join(' ');
}

export function toolInputJsonSchema(input: ToolInputSchema): ToolListing['inputSchema'] {
  return { ...toJsonSchema(input, 'input'), type: 'object' };
}

export function buildRegistry(
  catalog: Record<string, CatalogEntry>,
  declarations: ToolDeclaration[],
): RegisteredTool[] {
  const seen = new Set<string>();
  return declarations.map((d) => {
    const entry = catalog[d.name];
    if (!entry) throw new Error(`MCP tool ${d.name} is not in the tool catalog`);
    if (seen.has(d.name)) throw new Error(`MCP tool ${d.name} is declared twice`);
    seen.add(d.name);
    const access = ENDPOINT_ACCESS[d.access];
    if (!access)
      throw new Error(`MCP tool ${d.name}: ${d.access} has no row in domain/shared/access.ts ENDPOINT_ACCESS`);

    const mutation = Boolean(d.mutation);
    const versionGuard = Boolean(access.versionGuard);
    const extra: Record<string, z.ZodType> = {};
    // A declaration may make idempotency_key required (services that demand an Idempotency-Key).
    if (mutation && !('idempotency_key' in d.input.shape)) extra.idempotency_key = IDEMPOTENCY_KEY_FIELD.optional();
    if (versionGuard) extra.service_md_version = SERVICE_MD_VERSION_FIELD.optional();
    const input = Object.keys(extra).length ? d.input.extend(extra) : d.input;

    const description = entry.deprecated
      ? `Deprecated: use ${entry.deprecated.successor} instead. ${d.description}`
      : d.description;
    const title = titleOf(d.name);
    const listing: ToolListing = {
      name: d.name,
      title,
      description,
      inputSchema: toolInputJsonSchema(input),
      annotations: {
        title,
        readOnlyHint: !mutation,
        ...(mutation ? { destructiveHint: Boolean(d.destructive), idempotentHint: false } : {}),
        openWorldHint: false,
      },
      _meta: {
        group: entry.group,
        rest_equivalent: d.access,
        ...(entry.deprecated ? { deprecated: true, successor: entry.deprecated.successor } : {}),
      },
    };
    return {
      name: d.name,
      group: entry.group,
      deprecated: entry.deprecated,
      declaration: d,
      access,
      accessPath: d.access.slice(d.access.indexOf(' ') + 1),
      mutation,
      versionGuard,
      input,
      listing,
    };
  });
}
