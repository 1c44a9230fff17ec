// Merge templates of a member (in one environment, live or sandbox, like every record): create, list, read, new versions, delete, preview, and the
// one merge every user of a template goes through (a letter, a preview, a merged batch).
// Templates belong to the member: any key of the member may read and use them, only member
// keys manage them (domain/shared/access.ts), and another member's id (or the other
// environment's) reads as 404.
// Versions are never changed: PATCH makes the next one, and a piece names the version it
// was merged from (docs/decisions/0142-templates-versioned-and-escaped.md).
import { randomBytes } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, errors } from '../../domain/shared/errors';
import { pagination } from '../../domain/shared/pagination';
import {
  mergeTemplate,
  MergeVariables,
  missingVariables,
  requiredVariables,
  TemplateFormat,
  templateProblem,
} from '../../domain/templates/merge';
import { markdownLetterHtml, RenderedPdf } from '../shared/rendering';
import { sqlRows, sqlRun } from '../shared/sql';

export const TEMPLATE_ID_PATTERN = /^tmpl_[a-f0-9]{24}$/;

export interface TemplateRow {
  id: string;
  member_id: string;
  test_mode: boolean;
  name: string;
  description: string | null;
  current_version: number;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface TemplateVersionRow {
  template_id: string;
  version: number;
  format: TemplateFormat;
  source: string;
  html: string;
  variables: string[];
  created_at: Date;
}

/** The text of a new template or version: exactly one of html and markdown. */
export interface TemplateText {
  html?: string;
  markdown?: string;
}

export interface CreateTemplateInput extends TemplateText {
  name: string;
  description?: string | null;
}

export interface UpdateTemplateInput extends TemplateText {
  name?: string;
  description?: string | null;
}

export function newTemplateId(): string {
  return `tmpl_${randomBytes(12).toString('hex')}`;
}

/** The checked text of a version: the source, the HTML it merges into, its variables. A 400 names html or markdown. */
export function compileTemplate(
  text: TemplateText,
): Pick<TemplateVersionRow, 'format' | 'source' | 'html' | 'variables'> {
  const format: TemplateFormat = text.html !== undefined ? 'html' : 'markdown';
  const source = (text.html ?? text.markdown)!;
  const problem = templateProblem(source);
  if (problem) throw errors.validation([{ path: format, message: `the template ${problem}` }]);
  // A Markdown template is laid out once; its tags pass through markdown-it as text and are merged into the HTML.
  const html = format === 'markdown' ? markdownLetterHtml(source) : source;
  const compiledProblem = format === 'markdown' ? templateProblem(html) : null;
  if (compiledProblem) throw errors.validation([{ path: format, message: `the template ${compiledProblem}` }]);
  return { format, source, html, variables: requiredVariables(html) };
}

const iso = (d: Date) => d.toISOString();

function toTemplateObject(t: TemplateRow, v: TemplateVersionRow) {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    version: v.version,
    format: v.format,
    html: v.format === 'html' ? v.source : null,
    markdown: v.format === 'markdown' ? v.source : null,
    merge_variables: v.variables,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
    version_created_at: iso(v.created_at),
  };
}
export type TemplateObject = ReturnType<typeof toTemplateObject>;

async function ownTemplate(deps: Deps, auth: AuthContext, id: string, lock = false): Promise<TemplateRow> {
  if (!TEMPLATE_ID_PATTERN.test(id)) throw errors.notFound('Template');
  const [row] = await sqlRows<TemplateRow>(
    deps.db,
    `SELECT * FROM templates WHERE id = $1 AND member_id = $2 AND test_mode = $3 AND deleted_at IS NULL${lock ? ' FOR UPDATE' : ''}`,
    [id, auth.memberId, auth.testMode],
  );
  if (!row) throw errors.notFound('Template');
  return row;
}

async function versionOf(deps: Deps, id: string, version: number): Promise<TemplateVersionRow | undefined> {
  const [row] = await sqlRows<TemplateVersionRow>(
    deps.db,
    `SELECT * FROM template_versions WHERE template_id = $1 AND version = $2`,
    [id, version],
  );
  return row;
}

export async function createTemplate(deps: Deps, auth: AuthContext, input: CreateTemplateInput) {
  const compiled = compileTemplate(input);
  const id = newTemplateId();
  return deps.db.transaction(async (tx) => {
    const [t] = await sqlRows<TemplateRow>(
      tx,
      `INSERT INTO templates (id, member_id, test_mode, name, description, current_version) VALUES ($1, $2, $3, $4, $5, 1) RETURNING *`,
      [id, auth.memberId, auth.testMode, input.name, input.description ?? null],
    );
    const [v] = await sqlRows<TemplateVersionRow>(
      tx,
      `INSERT INTO template_versions (template_id, version, format, source, html, variables) VALUES ($1, 1, $2, $3, $4, $5) RETURNING *`,
      [id, compiled.format, compiled.source, compiled.html, compiled.variables],
    );
    return { template: toTemplateObject(t, v) };
  });
}

export async function listTemplates(deps: Deps, auth: AuthContext, input: { limit: number; offset: number }) {
  const [{ total }] = await sqlRows<{ total: number }>(
    deps.db,
    `SELECT count(*)::int AS total FROM templates WHERE member_id = $1 AND test_mode = $2 AND deleted_at IS NULL`,
    [auth.memberId, auth.testMode],
  );
  const rows = await sqlRows<TemplateRow & { v: TemplateVersionRow }>(
    deps.db,
    `SELECT t.*, row_to_json(v) AS v FROM templates t
       JOIN template_versions v ON v.template_id = t.id AND v.version = t.current_version
      WHERE t.member_id = $1 AND t.test_mode = $2 AND t.deleted_at IS NULL
      ORDER BY t.created_at DESC, t.id DESC LIMIT $3 OFFSET $4`,
    [auth.memberId, auth.testMode, input.limit, input.offset],
  );
  return {
    templates: rows.map((r) =>
      toTemplateObject(r, { ...r.v, created_at: new Date(r.v.created_at as unknown as string) }),
    ),
    pagination: pagination(total, input.limit, input.offset),
  };
}

/** A template at its current version, or at `version` (an older one kept for the pieces that used it). */
export async function getTemplate(deps: Deps, auth: AuthContext, id: string, version?: number) {
  const t = await ownTemplate(deps, auth, id);
  const v = await versionOf(deps, id, version ?? t.current_version);
  if (!v) throw errors.notFound('Template version');
  return { template: toTemplateObject(t, v), versions: await versionNumbers(deps, id) };
}

async function versionNumbers(deps: Deps, id: string): Promise<number[]> {
  const rows = await sqlRows<{ version: number }>(
    deps.db,
    `SELECT version FROM template_versions WHERE template_id = $1 ORDER BY version`,
    [id],
  );
  return rows.map((r) => r.version);
}

/** New text makes the next version (the old ones stay); a name or description alone changes the template, not its version. */
export async function updateTemplate(deps: Deps, auth: AuthContext, id: string, input: UpdateTemplateInput) {
  const compiled = input.html !== undefined || input.markdown !== undefined ? compileTemplate(input) : null;
  return deps.db.transaction(async (tx) => {
    const [t] = await sqlRows<TemplateRow>(
      tx,
      `SELECT * FROM templates WHERE id = $1 AND member_id = $2 AND test_mode = $3 AND deleted_at IS NULL FOR UPDATE`,
      [id, auth.memberId, auth.testMode],
    );
    if (!t || !TEMPLATE_ID_PATTERN.test(id)) throw errors.notFound('Template');
    const version = compiled ? t.current_version + 1 : t.current_version;
    if (compiled)
      await sqlRun(
        tx,
        `INSERT INTO template_versions (template_id, version, format, source, html, variables) VALUES ($1, $2, $3, $4, $5, $6)`,
        [id, version, compiled.format, compiled.source, compiled.html, compiled.variables],
      );
    await sqlRun(
      tx,
      `UPDATE templates SET name = $2, description = $3, current_version = $4, updated_at = now() WHERE id = $1`,
      [id, input.name ?? t.name, input.description === undefined ? t.description : input.description, version],
    );
    const [updated] = await sqlRows<TemplateRow>(tx, `SELECT * FROM templates WHERE id = $1`, [id]);
    const [v] = await sqlRows<TemplateVersionRow>(
      tx,
      `SELECT * FROM template_versions WHERE template_id = $1 AND version = $2`,
      [id, version],
    );
    return { template: toTemplateObject(updated, v) };
  });
}

/** Hides the template from lists, reads and new merges; its versions stay for the pieces that used them. */
export async function deleteTemplate(deps: Deps, auth: AuthContext, id: string) {
  const t = await ownTemplate(deps, auth, id);
  await sqlRun(deps.db, `UPDATE templates SET deleted_at = now(), updated_at = now() WHERE id = $1`, [t.id]);
  return { id: t.id, deleted: true };
}

/** The version a letter or batch merges: the current one, or `version`; a 400 naming template_id or template_version otherwise. */
export async function templateForMerge(
  deps: Deps,
  auth: AuthContext,
  id: string,
  version: number | undefined,
): Promise<TemplateVersionRow> {
  const t = await ownTemplate(deps, auth, id).catch((err) => {
    throw err instanceof ApiError && err.status === 404
      ? errors.validation([{ path: 'template_id', message: 'no template of yours has this id' }])
      : err;
  });
  const v = await versionOf(deps, t.id, version ?? t.current_version);
  if (!v)
    throw errors.validation([
      { path: 'template_version', message: `template ${t.id} has versions 1 to ${t.current_version}` },
    ]);
  return v;
}

/** The merged HTML of a version, or a 400 listing every variable it uses that `values` does not give. */
export function mergeOrRefuse(v: TemplateVersionRow, values: MergeVariables, field = 'merge_variables'): string {
  const missing = missingVariables(v.variables, values);
  if (missing.length > 0)
    throw errors.validation(
      missing.map((name) => ({ path: `${field}.${name}`, message: 'required: the template uses this variable' })),
      `Missing merge variables: ${missing.join(', ')}`,
    );
  return mergeTemplate(v.html, values);
}

/** POST /v1/templates/{id}/preview: the merged letter rendered by the letter renderer, as a PDF. */
export async function previewTemplate(
  deps: Deps,
  auth: AuthContext,
  id: string,
  input: { merge_variables: MergeVariables; version?: number },
): Promise<RenderedPdf & { version: number }> {
  const t = await ownTemplate(deps, auth, id);
  const v = await versionOf(deps, t.id, input.version ?? t.current_version);
  if (!v)
    throw errors.validation([{ path: 'version', message: `template ${t.id} has versions 1 to ${t.current_version}` }]);
  const html = mergeOrRefuse(v, input.merge_variables);
  const rendered = await deps.renderers.html.render(html, { field: 'merge_variables' });
  return { ...rendered, version: v.version };
}
