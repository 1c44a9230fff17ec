// Forwarded inbound context: intake aliases, forwarded mail items and postal threads, and
// the HTTP intake through which an email provider's inbound webhook delivers raw mail.
import { defineRoute, RouteDef } from '../../route';
import {
  AliasCreateRequest,
  AliasListQuery,
  AliasUpdateRequest,
  FileParams,
  ForwardingAddressBody,
  ForwardingAddressList,
  InboundGetQuery,
  InboundListQuery,
  InboundMailItemResponse,
  InboundMailList,
  IntakeQuery,
  IntakeResponse,
  ItemParams,
  PostalThreadResponse,
  PostalThreadList,
  ThreadGetQuery,
  ThreadListQuery,
  ThreadUpdateRequest,
} from './inbound-context.schemas';
import {
  createForwardingAddress,
  getForwardingAddress,
  listForwardingAddresses,
  updateForwardingAddress,
} from '../../../services/inbound-email/forwarding-addresses';
import { getInboundFile, getInboundMail, listInboundMail } from '../../../services/inbound-email/inbound-context';
import { getPostalThread, listPostalThreads, updatePostalThread } from '../../../services/inbound-email/postal-threads';
import { assertIntakeSecret, messageTooLarge, receiveEmail } from '../../../services/inbound-email/intake';
import { contentDisposition } from '../../../domain/shared/downloads';
import { BodyTooLargeError, readBodyBytes } from '../../json-body';

const VERSION_HEADER = {
  'X-Service-MD-Version': 'Agent keys: the current instructions version (400 if missing, 409 if stale)',
};
const READ_ERRORS = {
  403: { description: 'insufficient_scope (inbound.read)' },
  404: { description: "Not found, or another member's or agent's" },
};

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/inbound-forwarding-addresses',
    summary: 'List intake email aliases (newest first)',
    description:
      'Member-scoped intake email addresses that forwarded mail is sent to. An alias is an email address, never a physical address. Agent keys see only aliases assigned to their agent.',
    tags: ['Forwarded inbound context'],
    query: AliasListQuery,
    responses: { 200: { description: 'Aliases', schema: ForwardingAddressList }, ...READ_ERRORS },
    handler: async ({ deps, auth, query }) => ({ body: await listForwardingAddresses(deps, auth, query) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/inbound-forwarding-addresses',
    summary: 'Create an intake email alias (random or vanity local part)',
    description:
      'alias_type random (default) makes an unguessable 16-character local part; vanity takes requested_alias_local_part (3-40 of a-z 0-9 . _ -, not reserved, unique across the intake domain). Scope mailbox.write.',
    tags: ['Forwarded inbound context'],
    body: AliasCreateRequest,
    requestHeaders: VERSION_HEADER,
    responses: {
      201: { description: 'Alias created', schema: ForwardingAddressBody },
      400: { description: 'Validation failed (fields[]); agent_id that is not an agent of this member' },
      403: { description: 'insufficient_scope (mailbox.write)' },
      409: { description: 'ALIAS_TAKEN, or SERVICE_MD_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, body }) => ({ status: 201, body: await createForwardingAddress(deps, auth, body) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound-forwarding-addresses/:id',
    summary: 'One intake email alias',
    tags: ['Forwarded inbound context'],
    params: ItemParams,
    responses: { 200: { description: 'Alias', schema: ForwardingAddressBody }, ...READ_ERRORS },
    handler: async ({ deps, auth, params }) => ({ body: await getForwardingAddress(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/inbound-forwarding-addresses/:id',
    summary: 'Update an alias: label, agent, handling settings, status (active, paused, archived)',
    description:
      'Paused aliases refuse mail temporarily (SMTP 450, HTTP 409 ALIAS_PAUSED); archived is final (SMTP 550, HTTP 410) and the address is never reused. Only member keys reassign agent_id.',
    tags: ['Forwarded inbound context'],
    params: ItemParams,
    body: AliasUpdateRequest,
    requestHeaders: VERSION_HEADER,
    responses: {
      200: { description: 'Alias', schema: ForwardingAddressBody },
      400: { description: 'Validation failed (fields[])' },
      403: { description: 'insufficient_scope (mailbox.write), or member_key_required to reassign' },
      404: { description: 'Not found' },
      409: { description: 'ALIAS_ARCHIVED' },
    },
    handler: async ({ deps, auth, params, body }) => ({
      body: await updateForwardingAddress(deps, auth, params.id, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound',
    summary: 'List forwarded inbound mail items (newest first)',
    description:
      'Each item carries its drafting context by default (include=drafting). Workflow: read draft_context, draft the reply, send outbound mail with inbound_capture_id and, when present, postal_mail_thread_id.',
    tags: ['Forwarded inbound context'],
    query: InboundListQuery,
    responses: {
      200: { description: 'Items', schema: InboundMailList },
      400: { description: 'Validation failed' },
      ...READ_ERRORS,
    },
    handler: async ({ deps, auth, query }) => ({ body: await listInboundMail(deps, auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound/:id',
    summary: 'One forwarded inbound mail item',
    tags: ['Forwarded inbound context'],
    params: ItemParams,
    query: InboundGetQuery,
    responses: { 200: { description: 'Item', schema: InboundMailItemResponse }, ...READ_ERRORS },
    handler: async ({ deps, auth, params, query }) => ({
      body: await getInboundMail(deps, auth, { id: params.id, ...query }),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/inbound/:id/files/:fileId',
    summary: 'Download a stored file of an item (raw email or attachment)',
    tags: ['Forwarded inbound context'],
    params: FileParams,
    responses: { 200: { description: "The file's bytes with its content type", file: true }, ...READ_ERRORS },
    handler: async ({ deps, auth, params }) => {
      const file = await getInboundFile(deps, auth, params);
      return {
        body: file.body,
        headers: {
          'Content-Type': file.contentType,
          'Content-Disposition': contentDisposition(file.filename, { fallbackName: 'attachment' }),
        },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/postal-threads',
    summary: 'List postal threads (latest activity first)',
    tags: ['Forwarded inbound context'],
    query: ThreadListQuery,
    responses: { 200: { description: 'Threads', schema: PostalThreadList }, ...READ_ERRORS },
    handler: async ({ deps, auth, query }) => ({ body: await listPostalThreads(deps, auth, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/postal-threads/:id',
    summary: 'One postal thread (include=events adds its inbound items and outbound replies)',
    tags: ['Forwarded inbound context'],
    params: ItemParams,
    query: ThreadGetQuery,
    responses: { 200: { description: 'Thread', schema: PostalThreadResponse }, ...READ_ERRORS },
    handler: async ({ deps, auth, params, query }) => ({
      body: await getPostalThread(deps, auth, { id: params.id, include: query.include }),
    }),
  }),
  defineRoute({
    method: 'patch',
    path: '/v1/postal-threads/:id',
    summary: "Set a thread's status (open, waiting, closed, archived) or title",
    description: 'New mail on a waiting or closed thread reopens it; archived threads are never matched again.',
    tags: ['Forwarded inbound context'],
    params: ItemParams,
    body: ThreadUpdateRequest,
    requestHeaders: VERSION_HEADER,
    responses: {
      200: { description: 'Thread', schema: PostalThreadResponse },
      400: { description: 'Validation failed' },
      403: { description: 'insufficient_scope (mailbox.write)' },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params, body }) => ({ body: await updatePostalThread(deps, auth, params.id, body) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/intake/email',
    summary: 'Email intake webhook: one raw RFC 822 message',
    description:
      "For an email provider's inbound webhook (raw MIME). Authenticated with the shared intake secret in X-Intake-Secret (INBOUND_INTAKE_SECRET), not an API key. Same processing as the SMTP receiver. A repeated Message-ID for the same alias returns the first item (duplicate true).",
    tags: ['Forwarded inbound context'],
    query: IntakeQuery,
    requestHeaders: {
      'X-Intake-Secret': 'the shared intake secret',
      'Content-Type': 'message/rfc822 (any type is read as raw bytes)',
    },
    responses: {
      202: { description: 'Captured; extraction runs in the background', schema: IntakeResponse },
      200: { description: 'Already received (same alias and Message-ID)', schema: IntakeResponse },
      400: { description: 'MALFORMED_MESSAGE' },
      401: { description: 'intake_secret_missing or intake_secret_invalid' },
      404: { description: 'ALIAS_NOT_FOUND' },
      409: { description: 'ALIAS_PAUSED (retry later)' },
      410: { description: 'ALIAS_ARCHIVED' },
      413: { description: 'MESSAGE_TOO_LARGE' },
      422: { description: 'ATTACHMENT_REFUSED (a program or script); nothing stored' },
      503: { description: 'STORAGE_UNAVAILABLE or INTAKE_UNAVAILABLE; nothing stored, retry' },
    },
    handler: async ({ deps, query, ctx }) => {
      assertIntakeSecret(deps, ctx.get('x-intake-secret') || undefined);
      // A larger message is refused before it is buffered; the rest of it is read and dropped.
      const raw = await readBodyBytes(ctx, deps.config.inboundMaxMessageBytes).catch((err) => {
        throw err instanceof BodyTooLargeError ? messageTooLarge(err.limit) : err;
      });
      const result = await receiveEmail(deps, {
        raw,
        recipient: query.recipient ?? null,
        captureMethod: 'http',
        envelopeFrom: null,
      });
      return { status: result.duplicate ? 200 : 202, body: result };
    },
  }),
];
