// Forwarded-context tools: intake aliases, forwarded inbound mail with its drafting
// context, and postal threads.
import { listForwardingAddresses } from '../../../services/inbound-email/forwarding-addresses';
import { getInboundMail, listInboundMail } from '../../../services/inbound-email/inbound-context';
import { getPostalThread, listPostalThreads } from '../../../services/inbound-email/postal-threads';
import {
  AliasListQuery,
  InboundGetQuery,
  InboundListQuery,
  ThreadGetQuery,
  ThreadListQuery,
} from '../../routes/inbound-email/inbound-context.schemas';
import { Uuid } from '../../schemas/common';
import { defineTool } from '../tool';

export const inboundContextTools = [
  defineTool({
    name: 'list_inbound_forwarding_addresses',
    description:
      'Your intake email aliases: forward scans, photos, PDFs and notices to them. An alias is an email address, never a physical address.',
    input: AliasListQuery,
    access: 'GET /v1/inbound-forwarding-addresses',
    handler: (deps, auth, input) => listForwardingAddresses(deps, auth, input),
  }),
  defineTool({
    name: 'list_inbound_mail',
    description:
      'Forwarded inbound mail items, newest first, each with its drafting context (include: drafting, files, ocr, lineage). ' +
      'To reply: read draft_context, draft the letter, then send_outbound_mail with inbound_capture_id and postal_mail_thread_id.',
    input: InboundListQuery,
    access: 'GET /v1/inbound',
    handler: (deps, auth, input) => listInboundMail(deps, auth, input),
  }),
  defineTool({
    name: 'get_inbound_mail',
    description:
      'One forwarded inbound mail item (include: drafting, files, ocr, lineage, signed_urls; include signed_urls or signed_urls true adds 1-hour file URLs).',
    input: InboundGetQuery.extend({ inbound_mail_id: Uuid.describe('the inbound mail item id') }),
    access: 'GET /v1/inbound/:id',
    handler: (deps, auth, { inbound_mail_id: id, ...query }) => getInboundMail(deps, auth, { id, ...query }),
  }),
  defineTool({
    name: 'list_postal_threads',
    description:
      'Postal threads (conversations by mail), latest activity first; include=events adds their inbound items and outbound replies.',
    input: ThreadListQuery,
    access: 'GET /v1/postal-threads',
    handler: (deps, auth, input) => listPostalThreads(deps, auth, input),
  }),
  defineTool({
    name: 'get_postal_thread',
    description: 'One postal thread; include=events adds its inbound items and outbound replies.',
    input: ThreadGetQuery.extend({ thread_id: Uuid.describe('the postal thread id') }),
    access: 'GET /v1/postal-threads/:id',
    handler: (deps, auth, input) => getPostalThread(deps, auth, { id: input.thread_id, include: input.include }),
  }),
];
