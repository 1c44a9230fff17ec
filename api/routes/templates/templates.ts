// Merge templates: create, list, read, new versions, delete, and a preview PDF.
import { defineRoute, RouteDef } from '../../route';
import {
  CreateTemplateBody,
  GetTemplateQuery,
  ListTemplatesQuery,
  PreviewTemplateBody,
  TemplateAnswer,
  TemplateDeleted,
  TemplateDetail,
  TemplateList,
  TemplateParams,
  UpdateTemplateBody,
} from './templates.schemas';
import {
  createTemplate,
  deleteTemplate,
  getTemplate,
  listTemplates,
  previewTemplate,
  updateTemplate,
} from '../../../services/templates/templates';

const TAGS = ['Templates'];
const notFound = { 404: { description: "Not found (another member's templates are not visible)" } };
const refused = {
  400: {
    description:
      'Validation failed (fields[]): name, or html/markdown that uses an unescaped tag ({{{x}}}, {{&x}}), a partial, or is not a valid Mustache template',
  },
};

export const routes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/v1/templates',
    summary: 'Create a merge template (member keys)',
    description:
      'A letter as HTML or Markdown with Mustache tags ({{name}}), answered as version 1 with the variables a merge must give. ' +
      'Values are always HTML-escaped: a template using {{{x}}}, {{&x}} or a partial is refused with 400 naming html or markdown. ' +
      'A template belongs to the member and the environment of the key that made it (live or sandbox): every key of the member in that ' +
      'environment (agent keys with mail.send) may read, preview and send it.',
    tags: TAGS,
    body: CreateTemplateBody,
    responses: { 201: { description: 'Created', schema: TemplateAnswer }, ...refused },
    handler: async ({ deps, auth, body }) => ({ status: 201, body: await createTemplate(deps, auth, body) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/templates',
    summary: "List the member's templates",
    description: 'Newest first, each at its current version.',
    tags: TAGS,
    query: ListTemplatesQuery,
    responses: { 200: { description: 'A page of templates', schema: TemplateList } },
    handler: async ({ deps, auth, query }) => ({ body: await listTemplates(deps, auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/templates/:id',
    summary: 'Read a template (its current version, or ?version=)',
    tags: TAGS,
    params: TemplateParams,
    query: GetTemplateQuery,
    responses: { 200: { description: 'The template and its version numbers', schema: TemplateDetail }, ...notFound },
    handler: async ({ deps, auth, params, query }) => ({
      body: await getTemplate(deps, auth, params.id, query.version),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/templates/:id',
    summary: 'Change a template (new text makes a new version; old versions are kept)',
    description:
      'html or markdown makes the next version, which new letters use; pieces keep the version they were merged from. ' +
      'name and description alone change the template without a new version.',
    tags: TAGS,
    params: TemplateParams,
    body: UpdateTemplateBody,
    responses: {
      200: { description: 'The template at its new current version', schema: TemplateAnswer },
      ...refused,
      ...notFound,
    },
    handler: async ({ deps, auth, params, body }) => ({ body: await updateTemplate(deps, auth, params.id, body) }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/templates/:id',
    summary: 'Delete a template',
    description:
      'The template is no longer listed, read or usable for new letters (404, or 400 on template_id); pieces already sent keep their version.',
    tags: TAGS,
    params: TemplateParams,
    responses: { 200: { description: 'Deleted', schema: TemplateDeleted }, ...notFound },
    handler: async ({ deps, auth, params }) => ({ body: await deleteTemplate(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/templates/:id/preview',
    summary: 'A proof PDF of the template merged with merge_variables',
    description:
      'Merges the values into the template (current version, or version) and renders it with the letter renderer (US Letter, ' +
      'JavaScript off, no network, at most 60 pages and 20 s). Answers the PDF; X-Page-Count and X-Template-Version say its pages and version. ' +
      'A missing variable is a 400 with one fields[] entry per name (merge_variables.<name>); a merged letter the renderer refuses is a ' +
      '400 on merge_variables with details.render_refusal. Nothing is stored or charged.',
    tags: TAGS,
    params: TemplateParams,
    body: PreviewTemplateBody,
    responses: {
      200: {
        description: 'The proof PDF (application/pdf)',
        file: true,
        headers: { 'X-Page-Count': 'Pages of the rendered letter', 'X-Template-Version': 'The version merged' },
      },
      400: {
        description:
          'Validation failed: a missing merge variable (merge_variables.<name>), version, or a render refusal',
      },
      ...notFound,
      503: {
        description: 'The letter renderer is busy (RENDERER_BUSY) or unavailable (RENDERER_UNAVAILABLE); retryable',
      },
    },
    handler: async ({ deps, auth, params, body }) => {
      const proof = await previewTemplate(deps, auth, params.id, body);
      return {
        body: proof.pdf,
        headers: {
          'Content-Type': 'application/pdf',
          'Content-Disposition': `inline; filename="${params.id}-v${proof.version}.pdf"`,
          'X-Page-Count': String(proof.pageCount),
          'X-Template-Version': String(proof.version),
        },
      };
    },
  }),
];
