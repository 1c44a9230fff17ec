// Request and response schemas of merge templates (REST and the mail fields that use them).
import { z } from 'zod';
import {
  formJsonObject,
  multiLine,
  Pagination,
  paginationQuery,
  PG_INT_MAX,
  singleLine,
  TestMode,
} from '../../schemas/common';
import { MAX_TEMPLATE_BYTES } from '../../../domain/templates/merge';
import { TEMPLATE_ID_PATTERN } from '../../../services/templates/templates';

export const TemplateId = z
  .string()
  .regex(TEMPLATE_ID_PATTERN, { message: 'must be a template id: tmpl_ followed by 24 hex characters' });

export const TemplateParams = z.object({ id: TemplateId });

const templateText = (format: string) =>
  z
    .string()
    .min(1, 'required')
    .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_TEMPLATE_BYTES, {
      message: `may be at most ${MAX_TEMPLATE_BYTES} bytes`,
    })
    .describe(
      `The letter as ${format} with Mustache tags: {{name}} is replaced by the escaped value of merge variable name; ` +
        'sections ({{#list}}...{{/list}}, {{^flag}}...{{/flag}}) repeat or hide their content. Triple mustaches ({{{x}}}), ' +
        `{{&x}} and partials ({{>x}}) are refused (400 naming ${format}): no value becomes markup.`,
    );

const name = singleLine(z.string().trim().min(1, 'required').max(200));
const description = multiLine(z.string().trim().min(1).max(2000));

function oneText(v: { html?: string; markdown?: string }, ctx: z.RefinementCtx, required: boolean) {
  if (v.html !== undefined && v.markdown !== undefined)
    ctx.addIssue({ code: 'custom', path: ['markdown'], message: 'send html or markdown, not both' });
  else if (required && v.html === undefined && v.markdown === undefined)
    ctx.addIssue({ code: 'custom', path: ['html'], message: 'required: html or markdown' });
}

export const CreateTemplateBody = z
  .strictObject({
    name,
    description: description.optional(),
    html: templateText('html').optional(),
    markdown: templateText('markdown').optional(),
  })
  .superRefine((v, ctx) => oneText(v, ctx, true));

export const UpdateTemplateBody = z
  .strictObject({
    name: name.optional(),
    description: description.nullable().optional(),
    html: templateText('html').optional(),
    markdown: templateText('markdown').optional(),
  })
  .superRefine((v, ctx) => oneText(v, ctx, false));

export const TemplateVersionNumber = z.number().int().min(1).max(PG_INT_MAX);

export const GetTemplateQuery = z.strictObject({
  version: z.coerce
    .number()
    .int()
    .min(1)
    .max(PG_INT_MAX)
    .optional()
    .describe('An older version (default: the current one)'),
});

export const ListTemplatesQuery = z.strictObject({ ...paginationQuery() });

/** merge_variables of a letter or preview: a JSON object (in multipart, a JSON string field). */
export const MergeVariablesField = formJsonObject().describe(
  "Values of the template's variables by name (a JSON object; in multipart a JSON string). Strings, numbers and booleans are " +
    'inserted HTML-escaped; lists and objects feed sections. A variable the template uses and this object does not give is a ' +
    '400 with one fields[] entry per name (merge_variables.<name>), before anything is priced, stored or charged.',
);

export const PreviewTemplateBody = z.strictObject({
  merge_variables: MergeVariablesField.default({}),
  version: TemplateVersionNumber.optional().describe('An older version to preview (default: the current one)'),
});

export const Template = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  version: z.number().int().describe('The current version (or the one asked for)'),
  format: z.enum(['html', 'markdown']),
  html: z.string().nullable(),
  markdown: z.string().nullable(),
  merge_variables: z.array(z.string()).describe('The variables a merge must give (sorted)'),
  created_at: z.string(),
  updated_at: z.string(),
  version_created_at: z.string(),
});

export const TemplateAnswer = z.object({ ...TestMode, template: Template });
export const TemplateDetail = z.object({
  ...TestMode,
  template: Template,
  versions: z
    .array(z.number().int())
    .describe('Every version, oldest first; older ones stay for the pieces that used them'),
});
export const TemplateList = z.object({ ...TestMode, templates: z.array(Template), pagination: Pagination });
export const TemplateDeleted = z.object({ ...TestMode, id: z.string(), deleted: z.literal(true) });
