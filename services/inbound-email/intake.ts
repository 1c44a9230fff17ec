// Email intake: the one path by which forwarded mail enters the service, used by the SMTP
// receiver and by the HTTP intake endpoint alike. It checks the alias, the size and the
// shape of the message, parses it, refuses program attachments, stores the raw email and
// every attachment in the object store (with size and SHA-256), records the item and its
// files, and starts the item's extraction workflow. Nothing is half-stored: any failure
// removes the objects already written and leaves no row.
import { createHash, randomUUID } from 'node:crypto';
import { simpleParser, type ParsedMail } from 'mailparser';
import { TypedSearchAttributes } from '@temporalio/common';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import { safeEqual } from '../../domain/accounts/keys';
import { deliveryRefusal, type AliasStatus } from '../../domain/inbound-email/aliases';
import {
  attachmentVerdict,
  messageShapeProblem,
  parseAliasAddress,
  safeFilename,
} from '../../domain/inbound-email/message';
import {
  INBOUND_EXTRACTION_WORKFLOW,
  inboundExtractionWorkflowId,
  type InboundExtractionInput,
} from '../../workflows/inbound-email/contracts';
import type { inboundExtractionWorkflow } from '../../workflows/inbound-email/inbound-extraction';
import { AgentId, MemberId, ObjectId, ObjectStatus, TestMode } from '../../workflows/shared/search-attributes';
import type { Deps } from '../shared/deps';
import type { InboundMailItemRow } from './rows';
import { touchAliasReceived } from './alias-rows';
import { insertCapturedItem, insertItemFile } from './item-rows';
import { sqlRows, sqlRun } from '../shared/sql';

export type CaptureMethod = 'smtp' | 'http';

/** Longest stored body text (characters); the raw email keeps everything. */
const BODY_TEXT_MAX = 200_000;

/** The workflow waits about a minute for the intake's commit before it cleans up. */
export const COMMIT_WAIT = { attempts: 15, initialIntervalMs: 250, maxIntervalMs: 5000 };

export interface DeliverableAlias {
  id: string;
  member_id: string;
  agent_id: string | null;
  test_mode: boolean;
  email: string;
  status: AliasStatus;
}

export function messageTooLarge(limit: number): ApiError {
  return codedError(
    413,
    'MESSAGE_TOO_LARGE',
    `The message is larger than the ${Math.round(limit / 1048576)} MB intake limit.`,
    {
      suggestedAction: 'Send large documents as several smaller emails.',
    },
  );
}

/** 401 unless the presented intake secret equals INBOUND_INTAKE_SECRET (constant-time). */
export function assertIntakeSecret(deps: Deps, presented: string | undefined): void {
  if (!presented)
    throw errors.unauthorized('intake_secret_missing', 'Send the intake secret in the X-Intake-Secret header.');
  if (!deps.config.intakeSecret || !safeEqual(presented, deps.config.intakeSecret)) {
    throw errors.unauthorized('intake_secret_invalid', 'The intake secret is not valid.');
  }
}

/** The active alias an address delivers to; 404 unknown, 409 paused, 410 archived. */
export async function aliasForDelivery(deps: Deps, address: string): Promise<DeliverableAlias> {
  const parsed = parseAliasAddress(address);
  const notFound = codedError(404, 'ALIAS_NOT_FOUND', `No intake alias ${address || '(none)'} exists.`, {
    suggestedAction: `Send to an alias listed by GET /v1/inbound-forwarding-addresses (domain ${deps.config.inboundEmailDomain}).`,
  });
  if (!parsed || parsed.domain !== deps.config.inboundEmailDomain) throw notFound;
  const [alias] = await sqlRows<DeliverableAlias>(
    deps.db,
    `SELECT id, member_id, agent_id, test_mode, status, alias_local_part || '@' || domain AS email
       FROM inbound_forwarding_aliases WHERE lower(alias_local_part) = $1 AND lower(domain) = $2`,
    [parsed.localPart, parsed.domain],
  );
  if (!alias) throw notFound;
  const refusal = deliveryRefusal(alias.status);
  if (refusal) {
    throw codedError(refusal.permanent ? 410 : 409, refusal.code, refusal.message, {
      retryable: !refusal.permanent,
      suggestedAction: refusal.permanent
        ? 'Use another intake alias.'
        : 'Resume the alias with PATCH /v1/inbound-forwarding-addresses/{id}, or retry later.',
    });
  }
  return alias;
}

/** Alias addresses named in the delivery headers, most specific first. */
function headerRecipients(parsed: ParsedMail, domain: string): string[] {
  const out: string[] = [];
  for (const key of ['delivered-to', 'x-original-to', 'to', 'cc']) {
    for (const line of parsed.headerLines.filter((h) => h.key === key)) {
      for (const m of line.line.matchAll(/[^\s<>,;:"]+@[^\s<>,;"]+/g)) {
        const address = m[0].toLowerCase();
        if (address.endsWith(`@${domain}`) && !out.includes(address)) out.push(address);
      }
    }
  }
  return out;
}

interface StoredObject {
  key: string;
  fileId: string;
  kind: 'raw_email' | 'attachment';
  filename: string;
  contentType: string;
  declaredContentType: string | null;
  mismatch: boolean;
  size: number;
  sha256: string;
  body: Buffer;
}

export interface IntakeInput {
  raw: Buffer;
  /** The envelope recipient (SMTP RCPT TO, or the webhook's recipient); from the headers when absent. */
  recipient?: string | null;
  captureMethod: CaptureMethod;
  envelopeFrom?: string | null;
}

export interface IntakeResult {
  item_id: string;
  alias_id: string;
  status: string;
  attachment_count: number;
  /** True when this message (same alias and Message-ID) was already received; nothing new was stored. */
  duplicate: boolean;
}

export async function receiveEmail(deps: Deps, input: IntakeInput): Promise<IntakeResult> {
  const limit = deps.config.inboundMaxMessageBytes;
  if (input.raw.length > limit) throw messageTooLarge(limit);
  const malformed = (why: string) =>
    errors.badRequest('MALFORMED_MESSAGE', `The body is not an RFC 822 email: ${why}.`, {
      suggestedAction: 'Send the raw MIME message (headers, blank line, body) unchanged.',
    });
  const problem = messageShapeProblem(input.raw);
  if (problem) throw malformed(problem);

  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(input.raw, { skipTextToHtml: true, skipImageLinks: true });
  } catch (err) {
    throw malformed((err as Error).message);
  }

  const recipient = input.recipient ?? headerRecipients(parsed, deps.config.inboundEmailDomain)[0] ?? '';
  const alias = await aliasForDelivery(deps, recipient);
  const messageId = parsed.messageId ?? null;

  if (messageId) {
    const [existing] = await sqlRows<Pick<InboundMailItemRow, 'id' | 'status'>>(
      deps.db,
      `SELECT id, status FROM inbound_mail_items WHERE alias_id = $1 AND message_id = $2`,
      [alias.id, messageId],
    );
    if (existing) return duplicateResult(deps, existing.id, alias.id);
  }

  const itemId = randomUUID();
  const objects: StoredObject[] = [];
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  objects.push({
    key: `inbound/${itemId}/raw.eml`,
    fileId: randomUUID(),
    kind: 'raw_email',
    filename: 'raw.eml',
    contentType: 'message/rfc822',
    declaredContentType: null,
    mismatch: false,
    size: input.raw.length,
    sha256: sha(input.raw),
    body: input.raw,
  });
  // Images referenced from the HTML body (logos, signatures) are part of the raw email only.
  for (const att of parsed.attachments.filter((a) => !a.related)) {
    const filename = att.filename?.trim() || `attachment-${objects.length}`;
    const verdict = attachmentVerdict(filename, att.contentType ?? null, att.content);
    if (verdict.action === 'refuse') {
      throw errors.unprocessable('ATTACHMENT_REFUSED', `The message was refused: ${verdict.reason}.`, {
        suggestedAction: 'Send documents as PDF, DOCX, images or text; nothing from this message was stored.',
      });
    }
    const fileId = randomUUID();
    objects.push({
      key: `inbound/${itemId}/files/${fileId}-${safeFilename(filename)}`,
      fileId,
      kind: 'attachment',
      filename,
      contentType: verdict.contentType,
      declaredContentType: att.contentType ?? null,
      mismatch: verdict.mismatch,
      size: att.content.length,
      sha256: sha(att.content),
      body: att.content,
    });
  }

  const written: string[] = [];
  const removeWritten = async () => {
    for (const key of written)
      await deps.storage.remove(key).catch((err) => deps.log.warn({ err, key }, 'could not remove an intake object'));
  };
  try {
    for (const o of objects) {
      await deps.storage.put(o.key, o.body, o.contentType);
      written.push(o.key);
    }
  } catch (err) {
    await removeWritten();
    throw err instanceof ApiError
      ? err
      : errors.unavailable('STORAGE_UNAVAILABLE', 'The document store is unavailable; nothing was stored.');
  }

  const from = parsed.from?.value[0];
  const header = (name: string) => {
    const v = parsed.headers.get(name);
    return v === undefined ? null : typeof v === 'string' ? v : ((v as { text?: string }).text ?? String(v));
  };
  const headers = {
    message_id: messageId,
    date: parsed.date?.toISOString() ?? null,
    in_reply_to: parsed.inReplyTo ?? null,
    references: parsed.references ? ([] as string[]).concat(parsed.references) : [],
    to: header('to'),
    cc: header('cc'),
    reply_to: header('reply-to'),
  };
  const attachments = objects.filter((o) => o.kind === 'attachment');
  const workflowInput: InboundExtractionInput = {
    itemId,
    memberId: alias.member_id,
    agentId: alias.agent_id,
    testMode: alias.test_mode,
    storageKeys: objects.map((o) => o.key),
    commitWait: COMMIT_WAIT,
  };

  try {
    const inserted = await deps.db.transaction(async (tx) => {
      const rows = await insertCapturedItem(tx, [
        itemId,
        alias.member_id,
        alias.agent_id,
        alias.id,
        alias.test_mode,
        input.captureMethod,
        input.envelopeFrom ?? null,
        recipient.toLowerCase(),
        messageId,
        from?.name || null,
        from?.address?.toLowerCase() || null,
        parsed.subject ?? '',
        (parsed.text ?? '').slice(0, BODY_TEXT_MAX),
        JSON.stringify(headers),
      ]);
      if (!rows.length) return false;
      for (const [position, o] of objects.entries()) {
        await insertItemFile(tx, [
          o.fileId,
          itemId,
          o.kind,
          position,
          o.filename,
          o.contentType,
          o.declaredContentType,
          o.mismatch,
          o.size,
          o.sha256,
          o.key,
        ]);
      }
      await touchAliasReceived(tx, alias.id);
      // Started before the commit: a failed start rolls the item back; a lost commit is
      // noticed by the workflow, which then removes the objects.
      await deps.temporal.workflow.start<typeof inboundExtractionWorkflow>(INBOUND_EXTRACTION_WORKFLOW, {
        taskQueue: deps.config.taskQueue,
        workflowId: inboundExtractionWorkflowId(itemId),
        args: [workflowInput],
        typedSearchAttributes: new TypedSearchAttributes([
          { key: ObjectStatus, value: 'captured' },
          { key: ObjectId, value: itemId },
          { key: MemberId, value: alias.member_id },
          ...(alias.agent_id ? [{ key: AgentId, value: alias.agent_id }] : []),
          { key: TestMode, value: alias.test_mode },
        ]),
      });
      return true;
    });
    if (!inserted) {
      await removeWritten();
      const [existing] = await sqlRows<Pick<InboundMailItemRow, 'id'>>(
        deps.db,
        `SELECT id FROM inbound_mail_items WHERE alias_id = $1 AND message_id = $2`,
        [alias.id, messageId],
      );
      return duplicateResult(deps, existing.id, alias.id);
    }
  } catch (err) {
    await removeWritten();
    if (err instanceof ApiError) throw err;
    deps.log.error({ err, itemId }, 'inbound intake failed');
    throw errors.unavailable(
      'INTAKE_UNAVAILABLE',
      'The message could not be recorded; nothing was stored. Retry later.',
    );
  }
  return {
    item_id: itemId,
    alias_id: alias.id,
    status: 'captured',
    attachment_count: attachments.length,
    duplicate: false,
  };
}

async function duplicateResult(deps: Deps, itemId: string, aliasId: string): Promise<IntakeResult> {
  const [row] = await sqlRows<Pick<InboundMailItemRow, 'status'> & { attachments: number }>(
    deps.db,
    `SELECT i.status, (SELECT count(*)::int FROM inbound_mail_files f WHERE f.inbound_mail_item_id = i.id AND f.kind = 'attachment') AS attachments
       FROM inbound_mail_items i WHERE i.id = $1`,
    [itemId],
  );
  return { item_id: itemId, alias_id: aliasId, status: row.status, attachment_count: row.attachments, duplicate: true };
}
