// The four A2A skills, each a thin adapter onto the service its REST route calls: the
// message's parts become the route's input (a FilePart is the `document` file, the DataPart
// the form fields), the route's access row checks the key, and the answer is the REST JSON
// as a DataPart. quote_letter, track_letter and read_inbox answer with a message;
// send_letter answers with a task that follows its piece (services/a2a/tasks.ts).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Message, Part, PushNotificationConfig, Task } from '@a2a-js/sdk';
import { A2AError } from '@a2a-js/sdk/server';
import type { AuthContext } from '../../services/accounts/auth';
import type { Deps } from '../../services/shared/deps';
import { ApiError, errors } from '../../domain/shared/errors';
import { ENDPOINT_ACCESS } from '../../domain/shared/access';
import { decodeBase64 } from '../../domain/support/conversations';
import { ACCEPTED_FORMATS } from '../../domain/outbound-mail/documents';
import { A2A_SKILLS, A2aSkillId, isSkillId, taskStateOfMail } from '../../domain/a2a/tasks';
import { assertInstructionsVersion } from '../../services/accounts/instructions';
import { getMail } from '../../services/outbound-mail/read';
import { listInboundMail } from '../../services/inbound-email/inbound-context';
import { listAgentInbox } from '../../services/physical-inbound/agent-inbox';
import { A2aTaskRow, claimTask, currentTask, pieceOfTask, rejectTask, visibleTask } from '../../services/a2a/tasks';
import { setPushConfig } from '../../services/a2a/push-notifications';
import { MAX_DOCUMENT_BYTES } from '../routes/outbound-mail/mail';
import { submitAndAnswer } from '../routes/outbound-mail/submit-answer';
import { SubmitMailForm, SubmitMailQuery } from '../routes/outbound-mail/mail.schemas';
import { InboundListQuery } from '../routes/inbound-email/inbound-context.schemas';
import { AgentInboxListQuery } from '../routes/physical-inbound/physical-inbound.schemas';
import { PG_INT_MAX, Uuid } from '../schemas/common';
import { authorize, parseOrThrow } from '../router';

type Json = Record<string, unknown>;

/** What a skill gets: the caller, the message and what the request carried beside it. */
export interface SkillCall {
  deps: Deps;
  auth: AuthContext;
  message: Message;
  /** X-Service-MD-Version, when the client sent it as a header rather than in the DataPart. */
  versionHeader?: string;
  pushNotificationConfig?: PushNotificationConfig;
}

/**
 * A REST refusal as a JSON-RPC error: invalid params (-32602) for a refused request, internal
 * error (-32603) for what a retry may fix; `data` is the REST status and error body (fields[],
 * code, retryable, suggested_action).
 */
export function a2aErrorOf(err: ApiError): A2AError {
  return refusalError(err.status, err.toBody());
}

export function refusalError(status: number, body: Json): A2AError {
  const nested = body.error && typeof body.error === 'object' ? (body.error as Json) : undefined;
  const message = String(nested ? nested.message : (body.error ?? 'Request refused'));
  return new A2AError(status >= 500 ? -32603 : -32602, message, { status, ...body });
}

/** The skill a message asks for: `metadata.skill` on the message (or on the request). */
export function skillOf(message: Message, requestMetadata?: Json): A2aSkillId {
  const requested = message.metadata?.skill ?? requestMetadata?.skill;
  if (isSkillId(requested)) return requested;
  throw A2AError.invalidParams(
    requested === undefined
      ? 'Name the skill in message.metadata.skill'
      : `Unknown skill: ${typeof requested === 'string' ? requested : JSON.stringify(requested)}`,
    { skills: A2A_SKILLS.map((s) => s.id) },
  );
}

function dataOf(message: Message): Json {
  return Object.assign({}, ...message.parts.filter((p) => p.kind === 'data').map((p) => p.data)) as Json;
}

/** The FilePart's document as REST's `document` file: bytes only (URIs are never fetched). */
function documentOf(message: Message): { data: Buffer; filename: string | null; contentType: string | null } {
  const files = message.parts.filter((p) => p.kind === 'file');
  if (files.length === 0)
    throw errors.validation([{ path: 'document', message: `required: a ${ACCEPTED_FORMATS} file` }]);
  if (files.length > 1) throw errors.validation([{ path: 'document', message: 'More than one document file' }]);
  const file = files[0].file;
  if (!('bytes' in file) || typeof file.bytes !== 'string')
    throw errors.validation([
      { path: 'document', message: 'send the document as bytes (base64); URIs are not fetched' },
    ]);
  const data = decodeBase64(file.bytes);
  if (!data) throw errors.validation([{ path: 'document', message: 'must be base64' }]);
  if (data.length > MAX_DOCUMENT_BYTES)
    throw errors.validation([{ path: 'document', message: 'Upload too large: document may be at most 10 MB' }]);
  return {
    data,
    filename: typeof file.name === 'string' && file.name ? file.name.slice(0, 255) : null,
    contentType: typeof file.mimeType === 'string' ? file.mimeType : null,
  };
}

/** The DataPart of a letter: the REST form fields plus what REST takes as query and headers. */
const LetterData = SubmitMailForm.extend({
  ...SubmitMailQuery.shape,
  max_cost_cents: z.number().int().min(0).max(PG_INT_MAX).optional(),
  service_md_version: z.coerce.number().int().positive().max(PG_INT_MAX).optional(),
});

/** Parses the letter, applies the key's access row and the instructions-version guard, and submits it. */
async function submitLetter(call: SkillCall, dryRun: boolean, opts: { idempotencyKey?: string; a2aTaskId?: string }) {
  const { deps, auth, message } = call;
  const document = documentOf(message);
  const {
    agent_id: agentId,
    max_cost_cents: maxCostCents,
    service_md_version: version,
    ...fields
  } = parseOrThrow(LetterData, { ...dataOf(message), dry_run: dryRun });
  await assertInstructionsVersion(deps, auth, version ?? call.versionHeader);
  return submitAndAnswer(
    deps,
    auth,
    { fields, document, agentId, maxCostCents, idempotencyKey: opts.idempotencyKey, a2aTaskId: opts.a2aTaskId },
    dryRun ? 'a2a:quote_letter' : 'a2a:send_letter',
  );
}

function agentReply(message: Message, text: string, data: Json): Message {
  const parts: Part[] = [
    { kind: 'text', text },
    { kind: 'data', data },
  ];
  return { kind: 'message', role: 'agent', messageId: randomUUID(), contextId: message.contextId, parts };
}

function access(key: string) {
  const row = ENDPOINT_ACCESS[key];
  return { row, path: key.slice(key.indexOf(' ') + 1) };
}

function authorizeRoute(auth: AuthContext, key: string): void {
  const { row, path } = access(key);
  authorize(row, auth, path);
}

async function quoteLetter(call: SkillCall): Promise<Message> {
  authorizeRoute(call.auth, 'POST /v1/mail');
  const r = await submitLetter(call, true, {});
  if (r.status >= 400) throw refusalError(r.status, r.body as Json);
  // REST bodies carry test_mode (the middleware adds it); the DataPart does too.
  const quote: Json = { ...(r.body as Json), test_mode: call.auth.testMode };
  return agentReply(
    call.message,
    `The letter would cost ${String(quote.cost_display)}; nothing was stored or charged.`,
    quote,
  );
}

/** A refusal that a retry of the same message may get past (5xx, retryable conflicts) is not final. */
function finalRefusal(status: number, body: Json): boolean {
  return status < 500 && body.retryable !== true;
}

/**
 * send_letter: the task is claimed by the messageId first (a retry finds it), the push
 * config stored before the piece exists (so its first event is delivered), then the letter
 * is submitted under the messageId as its Idempotency-Key. A refusal becomes the task's
 * final `rejected` answer, unless a retry could succeed.
 */
async function sendLetter(call: SkillCall): Promise<Task> {
  const { deps, auth, message } = call;
  authorizeRoute(auth, 'POST /v1/mail');
  const { row: task, created } = await claimTask(deps, auth, {
    taskId: randomUUID(),
    contextId: message.contextId ?? randomUUID(),
    messageId: message.messageId,
    skill: 'send_letter',
    agentId: auth.agentId ?? null,
  });
  if (task.skill !== 'send_letter' || task.rejection || (await pieceOfTask(deps, task.id)))
    return withSecret(await currentTask(deps, task), null);
  let secret: string | null = null;
  if (created && call.pushNotificationConfig) {
    secret = (
      await setPushConfig(deps, auth, task, call.pushNotificationConfig, 'configuration.pushNotificationConfig')
    ).signingSecret;
  }
  let status: number;
  let body: Json;
  try {
    const r = await submitLetter(call, false, { idempotencyKey: `a2a:${message.messageId}`, a2aTaskId: task.id });
    status = r.status;
    body = r.body as Json;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    status = err.status;
    body = err.toBody();
  }
  if (status >= 400) {
    if (!finalRefusal(status, body)) throw refusalError(status, body);
    return withSecret(await currentTask(deps, await rejectTask(deps, task.id, { status, body })), secret);
  }
  return withSecret(await currentTask(deps, task), secret);
}

/** The signing secret of a config the message carried, shown on this answer only. */
function withSecret(task: Task, secret: string | null): Task {
  return secret ? { ...task, metadata: { ...task.metadata, push_notification_signing_secret: secret } } : task;
}

const TrackData = z
  .strictObject({ outbound_mail_id: Uuid.optional(), task_id: Uuid.optional() })
  .refine((d) => d.outbound_mail_id || d.task_id, {
    message: 'name the letter: outbound_mail_id, or task_id of its send_letter task',
    path: ['outbound_mail_id'],
  });

async function trackLetter(call: SkillCall): Promise<Message> {
  const { deps, auth, message } = call;
  authorizeRoute(auth, 'GET /v1/mail/:id');
  const input = parseOrThrow(TrackData, dataOf(message));
  let id = input.outbound_mail_id;
  if (!id) {
    const task = await visibleTask(deps, auth, input.task_id!);
    const piece = task ? await pieceOfTask(deps, task.id) : null;
    if (!piece) throw errors.validation([{ path: 'task_id', message: 'no letter of yours has this task' }]);
    id = piece.id;
  }
  const record = await getMail(deps, auth, id);
  return agentReply(call.message, `Letter ${record.id} is ${record.status}.`, {
    outbound_mail_id: record.id,
    status: record.status,
    task_state: taskStateOfMail(record.status),
    tracking_number: record.tracking_number,
    carrier: record.carrier,
    mailed_at: record.mailed_at,
    delivered_at: record.delivered_at,
    fulfillment_photos: record.fulfillment_photos,
    outbound_mail: record,
    test_mode: record.test_mode,
  });
}

const InboxData = z.strictObject({
  limit: z.number().int().min(1).max(50).optional(),
  offset: z.number().int().min(0).max(10000).optional(),
});

/** read_inbox: both read-only lists the key may read; a source it may not read is listed with its refusal. */
async function readInbox(call: SkillCall): Promise<Message> {
  const { deps, auth, message } = call;
  const page = parseOrThrow(InboxData, dataOf(message));
  const skipped: Json[] = [];
  const read = async (source: string, route: string, run: () => Promise<unknown>) => {
    try {
      authorizeRoute(auth, route);
      return await run();
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      skipped.push({ source, status: err.status, ...err.toBody() });
      return null;
    }
  };
  const forwarded = await read('forwarded', 'GET /v1/inbound', () =>
    listInboundMail(deps, auth, parseOrThrow(InboundListQuery, page)),
  );
  const assigned = await read('assigned', 'GET /v1/agent-inbox', () =>
    listAgentInbox(deps, auth, parseOrThrow(AgentInboxListQuery, page)),
  );
  if (!forwarded && !assigned) {
    throw a2aErrorOf(
      errors.forbidden('insufficient_scope', 'This key may read neither forwarded nor assigned inbound mail.'),
    );
  }
  const count = (list: unknown, key: string) => ((list as Json | null)?.[key] as unknown[] | undefined)?.length ?? 0;
  return agentReply(
    message,
    `${count(forwarded, 'items')} forwarded and ${count(assigned, 'items')} assigned inbound items.`,
    { forwarded, assigned, skipped, test_mode: auth.testMode },
  );
}

/** Runs the message's skill; a refusal of a message-answered skill is a JSON-RPC error. */
export async function runSkill(skill: A2aSkillId, call: SkillCall): Promise<Message | Task> {
  try {
    switch (skill) {
      case 'quote_letter':
        return await quoteLetter(call);
      case 'send_letter':
        return await sendLetter(call);
      case 'track_letter':
        return await trackLetter(call);
      case 'read_inbox':
        return await readInbox(call);
    }
  } catch (err) {
    if (err instanceof ApiError) throw a2aErrorOf(err);
    throw err;
  }
}

export type { A2aTaskRow };
