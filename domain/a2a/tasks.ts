// The A2A surface's pure rules: its four skills (each served by the service a REST route
// uses, and checked with that route's access row), and how a letter's task state follows
// its piece: submitted -> working (ready, mailed) -> completed (delivered), failed or
// canceled; input-required while the owner's approval is awaited.
import type { MailStatusName } from '../workflow-safe/mail-rules';

/** The A2A protocol revision the card and the server speak (@a2a-js/sdk 0.3.x). */
export const A2A_PROTOCOL_VERSION = '0.3.0';

export const A2A_SKILL_IDS = ['quote_letter', 'send_letter', 'track_letter', 'read_inbox'] as const;
export type A2aSkillId = (typeof A2A_SKILL_IDS)[number];

export interface A2aSkill {
  id: A2aSkillId;
  name: string;
  description: string;
  tags: string[];
  examples: string[];
  inputModes: string[];
  outputModes: string[];
  /** The ENDPOINT_ACCESS rows whose key kinds, scopes and guards the skill applies. */
  access: string[];
}

const JSON_MODE = 'application/json';
const DOCUMENT_MODES = [
  'application/pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'image/jpeg',
  'image/png',
  'text/plain',
  'text/csv',
];

export const A2A_SKILLS: readonly A2aSkill[] = [
  {
    id: 'quote_letter',
    name: 'Quote a letter',
    description:
      'Prices a letter without sending it (POST /v1/mail with dry_run): a FilePart with the document and a DataPart with the recipient and options. ' +
      'The answer is a message whose DataPart holds the dry run: cost_cents, cost_display, credits_required_cents, cost_breakdown, warnings, address_check and proof_url (the print proof, signed for 1 hour). Nothing is stored or charged.',
    tags: ['outbound-mail', 'dry-run', 'pricing'],
    examples: ['What would this one-page letter to Springfield, IL cost by first class?'],
    inputModes: [JSON_MODE, ...DOCUMENT_MODES],
    outputModes: [JSON_MODE],
    access: ['POST /v1/mail'],
  },
  {
    id: 'send_letter',
    name: 'Send a letter',
    description:
      'Sends a letter (POST /v1/mail): a FilePart with the document (PDF, DOCX, JPG, PNG, TXT, CSV, HTML or Markdown by its name, at most 10 MB, as bytes) and a DataPart with the recipient_* fields and options ' +
      '(mail_class, color, duplex, requires_approval, metadata, max_cost_cents, service_md_version, ...). The same validation, safeguards, duplicate protection and instructions-version rule as REST; ' +
      'the messageId is the idempotency key. The answer is a task that follows the piece: submitted, working (ready, mailed), completed (delivered), failed or canceled, and input-required while the owner approves it. ' +
      'tasks/cancel cancels the piece before printing (refunded once); push notification configs receive every change.',
    tags: ['outbound-mail', 'letters', 'tasks'],
    examples: ['Mail this PDF to Jane Doe, 1 Main St, Springfield, IL 62701, first class.'],
    inputModes: [JSON_MODE, ...DOCUMENT_MODES],
    outputModes: [JSON_MODE],
    access: ['POST /v1/mail'],
  },
  {
    id: 'track_letter',
    name: 'Track a letter',
    description:
      'Reads a piece (GET /v1/mail/{id}): a DataPart {outbound_mail_id} (or {task_id} of a send_letter task). The answer is a message whose DataPart holds status, tracking_number, carrier, ' +
      'fulfillment_photos with fresh 1-hour signed URLs, and the whole outbound mail record.',
    tags: ['outbound-mail', 'tracking'],
    examples: ['Where is letter 3f1c...? Has it been delivered?'],
    inputModes: [JSON_MODE],
    outputModes: [JSON_MODE],
    access: ['GET /v1/mail/:id'],
  },
  {
    id: 'read_inbox',
    name: 'Read the inbox',
    description:
      'Lists inbound mail, read-only: forwarded inbound mail (GET /v1/inbound, scope inbound.read) and, for agent keys, assigned inbound (GET /v1/agent-inbox, scope agent.inbox.read). ' +
      'An optional DataPart {limit, offset}. The answer is a message whose DataPart holds both lists; a source the key may not read is listed under skipped with its refusal.',
    tags: ['inbound', 'inbox'],
    examples: ['What mail came in for me this week?'],
    inputModes: [JSON_MODE],
    outputModes: [JSON_MODE],
    access: ['GET /v1/inbound', 'GET /v1/agent-inbox'],
  },
];

export function isSkillId(value: unknown): value is A2aSkillId {
  return typeof value === 'string' && (A2A_SKILL_IDS as readonly string[]).includes(value);
}

/** The task states this server reports (a subset of the protocol's TaskState). */
export type A2aTaskState =
  'submitted' | 'working' | 'input-required' | 'completed' | 'canceled' | 'failed' | 'rejected';

/** A letter's task state from its piece's status. */
export function taskStateOfMail(status: MailStatusName): A2aTaskState {
  switch (status) {
    case 'pending_approval':
      return 'input-required';
    case 'submitted':
    case 'funding_pending':
      return 'submitted';
    case 'ready':
    case 'mailed':
      return 'working';
    case 'delivered':
      return 'completed';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'canceled';
  }
}

export const FINAL_TASK_STATES: readonly A2aTaskState[] = ['completed', 'canceled', 'failed', 'rejected'];

/** What the task's status message says about the piece. */
export function mailStatusText(p: {
  status: MailStatusName;
  tracking_number?: string | null;
  carrier?: string | null;
  error_message?: string | null;
}): string {
  switch (p.status) {
    case 'pending_approval':
      return "The letter waits for the account owner's approval (console or POST /v1/mail/{id}/approve); nothing is charged until then.";
    case 'funding_pending':
      return 'The letter waits for its Business mail run to be funded.';
    case 'submitted':
      return 'The letter is accepted and queued for printing.';
    case 'ready':
      return 'The letter is printed and enveloped; proof photos are attached.';
    case 'mailed':
      return `The letter is mailed${p.carrier ? ` with ${p.carrier}` : ''}${p.tracking_number ? `, tracking ${p.tracking_number}` : ''}.`;
    case 'delivered':
      return 'The letter is delivered.';
    case 'failed':
      return `The letter failed${p.error_message ? `: ${p.error_message}` : '.'}`;
    case 'cancelled':
      return 'The letter was cancelled before printing; eligible credits were refunded.';
  }
}
