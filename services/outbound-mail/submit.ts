// Submitting outbound mail, shared by REST and MCP (POST /v1/mail, POST /v1/test/mail,
// send_outbound_mail, create_test_outbound_mail), with dry run and every safeguard.
// Submission order: validate -> (mail run checks) -> inspect document -> price ->
// spending safeguards -> (dry run answers here) -> duplicate protection -> upload (and the
// print proof of a small document, rendered beside it) -> one
// transaction (record + debit) -> publish the piece's first event -> start the piece
// workflow. Everything after that belongs to the workflow. A child of a Business mail run is stored funding_pending and
// debited by its run's funding, unless its class commits immediately (then it is debited
// and submitted like any piece).
import { noteCreditsRefused } from '../notifications/notices';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import { sha256Hex } from '../../domain/accounts/keys';
import { dailyPiecesRefusal, MailStatusName, spendRefusal } from '../../domain/workflow-safe/mail-rules';
import { commitsImmediately } from '../../domain/workflow-safe/mail-runs';
import { balanceCents, debit, insufficientCredits, lockMemberRow } from '../billing/credits';
import { requestFingerprint } from '../shared/idempotency';
import { assignFacility } from '../operations/facilities';
import { assertLinkedObjects } from '../shared/linked-objects';
import { getSendingMailbox, listSendingMailboxes, SendingMailbox } from '../accounts/agents';
import { lockMailRunForChild, mailRunForChild } from '../mail-runs/mail-runs';
import type { MailRunRow } from '../mail-runs/record';
import { checkDuplicate, duplicateRefusal, piecesLast24h, safeguardRefusal, spentLast24h } from './safeguards';
import { MailRecord, MailRow, publishMailEvent, toMailRecord } from './record';
import { DryRunQuote, dryRunQuote, QuotedSubmission, quoteSubmission, SubmitMailRequest } from './quote';
import { newMailRow } from './mail-rows';
import { returnAddress } from './submission-fields';
import { insertMailRow } from './rows';
import { storeSubmissionProof } from './print-proofs';
import { checkSendAfter } from './scheduled-send';
import { reviewRecipientAddress } from './address-review';
import type { AddressCheck } from '../../domain/outbound-mail/address-check';
import type { InstructionsDocument } from '../accounts/instructions';
import { startMailWorkflow } from './workflow';
import { sqlRows, sqlRun } from '../shared/sql';

export type { SubmitMailRequest } from './quote';
export type { SubmitMailFields } from './submission-fields';

/** A created piece's answer: its record and the balance after its debit. */
export type SubmittedMail = MailRecord & { credit_balance_cents: number };

/** What a submission did: priced it only (dry run), or created the piece (or found the one this Idempotency-Key created). */
export type SubmitOutcome = { kind: 'dry_run'; quote: DryRunQuote } | { kind: 'created'; mail: SubmittedMail };

/**
 * Fault injection for the "API dies between commit and workflow start" case: tests set
 * afterCommit to throw, which leaves a committed, debited piece without a workflow for
 * the reconciler to find; announce to throw makes publishing the piece's first event
 * fail. Never set outside tests.
 */
export const mailFaults: {
  afterCommit?: (outboundMailId: string) => void;
  announce?: (outboundMailId: string) => void;
} = {};

/** How long a submission waits for its workflow start before leaving it to the reconciler. */
const WORKFLOW_START_DEADLINE_MS = 5_000;

/** What makes two submissions the same request for an Idempotency-Key: the fields, the sender, the cap and the document's bytes. */
export function submissionFingerprint(req: SubmitMailRequest): string {
  const d = req.document;
  return requestFingerprint({
    fields: req.fields,
    agent_id: req.agentId ?? null,
    max_cost_cents: req.maxCostCents ?? null,
    document:
      'data' in d
        ? sha256Hex(d.data)
        : 'template' in d
          ? { template: d.template }
          : { simulated_pages: d.simulatedPages },
  });
}

/**
 * POST /v1/mail (and POST /v1/test/mail): see the module comment for the order of checks.
 *
 * Two idempotency guards, on purpose. The caller's runIdempotent
 * (api/routes/outbound-mail/submit-answer.ts) stores the first answer and holds concurrent
 * repeats off while it runs; but its record is completed only after the piece's
 * transaction has committed, so a process that dies in between leaves a record that a
 * retry takes over after 30 s and runs again. The piece row carries the key itself (unique per owner key,
 * written in the same transaction as the debit), so that rerun finds the committed piece
 * (pieceForIdempotencyKey) instead of charging a second one. `fingerprint` is the one
 * runIdempotent was given.
 */
export async function submitMail(
  deps: Deps,
  auth: AuthContext,
  req: SubmitMailRequest,
  fingerprint = submissionFingerprint(req),
): Promise<SubmitOutcome> {
  const f = req.fields;
  if (req.idempotencyKey) {
    const earlier = await pieceForIdempotencyKey(deps, auth, req.idempotencyKey, fingerprint);
    if (earlier) return earlier;
  }
  checkSendAfter(f.send_after);
  // Extension: the offline address check (advice; a 400 only with strict_address=true).
  const addressCheck = reviewRecipientAddress(f);
  // Linked objects must be the caller's (and in its environment) before anything is priced or stored.
  await assertLinkedObjects(deps.db, auth, {
    package_id: ['package', f.package_id],
    inbound_capture_id: ['inbound_mail_item', f.inbound_capture_id],
    postal_mail_thread_id: ['postal_thread', f.postal_mail_thread_id],
  });
  const run = f.mail_run_id !== undefined ? await mailRunForChild(deps, auth, f.mail_run_id) : null;
  const sender = await sendingMailbox(deps, auth, req.agentId);
  const quote = await quoteSubmission(deps, auth, req, { agentId: sender.mailbox.agent_id, member: sender.member });
  if (f.dry_run) return { kind: 'dry_run', quote: await dryRunQuote(deps, quote, addressCheck) };

  const plan = await refuseBeforeUpload(deps, quote, run).catch(async (err) => {
    await noteCreditsRefused(deps, auth, err, 'letter');
    throw err;
  });
  const documentKey = `mail/${quote.id}/document.${quote.document.extension}`;
  const sourceKey = quote.source ? `mail/${quote.id}/source.${quote.source.extension}` : null;
  const proofKey = await uploadDocumentAndProof(deps, quote, documentKey, sourceKey);
  let stored: StoredPiece;
  try {
    stored = await storePiece(deps, auth, quote, {
      ...plan,
      run,
      documentKey,
      sourceKey,
      fingerprint,
      idempotencyKey: req.idempotencyKey ?? null,
      addressCheck,
      proofKey,
      a2aTaskId: req.a2aTaskId ?? null,
    });
  } catch (err) {
    await deps.storage.remove(documentKey).catch(() => undefined);
    if (sourceKey) await deps.storage.remove(sourceKey).catch(() => undefined);
    if (proofKey) await deps.storage.remove(proofKey).catch(() => undefined);
    await noteCreditsRefused(deps, auth, err, 'letter');
    // A concurrent retry with the same Idempotency-Key committed first: answer with its piece.
    if (req.idempotencyKey && (err as { constraint?: string }).constraint === 'outbound_mail_idempotency') {
      const earlier = await pieceForIdempotencyKey(deps, auth, req.idempotencyKey, fingerprint);
      if (earlier) return earlier;
    }
    throw err;
  }

  const { row, balanceCents: balanceAfter } = stored;
  mailFaults.afterCommit?.(row.id);
  const announced = await announcePiece(deps, row, req.instructions ?? null);
  await startPieceWorkflow(deps, row, announced);
  // The inserted row is the answer: the workflow start sets only workflow_started_at,
  // which the record does not show. The balance is the one the transaction saw.
  return { kind: 'created', mail: { ...(await toMailRecord(deps, row, [])), credit_balance_cents: balanceAfter } };
}

/** The piece an earlier request with this Idempotency-Key created, if any; the key with another request is refused. */
async function pieceForIdempotencyKey(
  deps: Deps,
  auth: AuthContext,
  key: string,
  fingerprint: string,
): Promise<SubmitOutcome | null> {
  const [row] = await sqlRows<MailRow>(
    deps.db,
    `SELECT * FROM outbound_mail WHERE owner_key = $1 AND idempotency_key = $2`,
    [auth.ownerKey, key],
  );
  if (!row) return null;
  if (row.request_fingerprint !== fingerprint) {
    throw errors.unprocessable(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was already used with a different request body.',
      {
        suggestedAction: 'Use a new Idempotency-Key for a different request.',
      },
    );
  }
  const record = await toMailRecord(deps, row, []);
  return { kind: 'created', mail: { ...record, credit_balance_cents: await balanceCents(deps.db, row.member_id) } };
}

function noActiveMailbox(message: string): ApiError {
  return codedError(404, 'MAILBOX_NOT_FOUND', message, {
    suggestedAction:
      'Create an agent (POST /v1/agents) or pass ?agent_id= naming one of your active agents (GET /v1/mailboxes).',
  });
}

/**
 * The mailbox (agent) that sends the piece, with the member's settings read in the same
 * statement. An agent key sends from its own agent's mailbox (404 when the agent was
 * deleted). A member key names one with ?agent_id=, or sends from its only agent; with no
 * active agent there is no mailbox (404), and with several it must choose (400).
 */
async function sendingMailbox(deps: Deps, auth: AuthContext, requested?: string): Promise<SendingMailbox> {
  if (isAgentKey(auth)) return getSendingMailbox(deps, auth, auth.agentId!);
  if (requested) return getSendingMailbox(deps, auth, requested);
  const mailboxes = await listSendingMailboxes(deps, auth);
  if (mailboxes.length === 0)
    throw noActiveMailbox('No active mailbox: this account has no active agent to send from.');
  if (mailboxes.length > 1) {
    throw errors.validation([
      { path: 'query.agent_id', message: 'this account has several agents; name the sending agent with ?agent_id=' },
    ]);
  }
  return mailboxes[0];
}

/** What the piece becomes once stored: debited now, or waiting for approval or for its run's funding. */
interface PiecePlan {
  status: MailStatusName;
  charge: boolean;
}

/**
 * Uploads the document (and what was sent, when it was laid out into it) and, beside it,
 * the print proof when the submission renders it (small documents; storeSubmissionProof).
 * Returns the proof's key, or null for the workflow to render it. A failed upload leaves
 * none of the objects behind.
 */
async function uploadDocumentAndProof(
  deps: Deps,
  q: QuotedSubmission,
  documentKey: string,
  sourceKey: string | null,
): Promise<string | null> {
  const doc = q.document;
  const proofing = storeSubmissionProof(
    deps,
    q.id,
    { ...q.fields, ...returnAddress(q.fields, q.member) },
    { bytes: doc.data, type: doc.type, pageCount: doc.pageCount },
    new Date(),
  );
  try {
    await Promise.all([
      deps.storage.put(documentKey, doc.data, doc.contentType),
      sourceKey && q.source ? deps.storage.put(sourceKey, q.source.data, q.source.contentType) : null,
    ]);
  } catch (err) {
    const proofKey = await proofing;
    if (proofKey) await deps.storage.remove(proofKey).catch(() => undefined);
    await deps.storage.remove(documentKey).catch(() => undefined);
    if (sourceKey) await deps.storage.remove(sourceKey).catch(() => undefined);
    throw err;
  }
  return proofing;
}

/** The refusals that need no lock, before the upload: daily pieces, duplicate protection, credits. */
async function refuseBeforeUpload(deps: Deps, q: QuotedSubmission, run: MailRunRow | null): Promise<PiecePlan> {
  const f = q.fields;
  const piecesProblem = dailyPiecesRefusal(q.piecesToday);
  if (piecesProblem) throw safeguardRefusal(piecesProblem);
  if (!f.allow_duplicate) {
    const duplicateId = await checkDuplicate(deps.db, q.probe);
    if (duplicateId) throw duplicateRefusal(duplicateId);
  }
  // A run child waits for its run's funding unless its class commits immediately.
  const awaitsFunding = run !== null && !commitsImmediately(f.mail_class);
  const charge = !q.testMode && !q.pending && !awaitsFunding;
  // A cheap look before uploading; the debit below re-checks under the member lock.
  if (charge && q.balanceCents < q.priceCents) throw insufficientCredits(deps, q.priceCents, q.balanceCents);
  return { status: q.pending ? 'pending_approval' : awaitsFunding ? 'funding_pending' : 'submitted', charge };
}

/** A transaction-scoped lock on a name (a hash collision only makes two submissions wait for each other). */
async function lockName(tx: Pick<EntityManager, 'query'>, name: string): Promise<void> {
  await sqlRun(tx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [name]);
}

/** The committed piece and the member's balance after it: the debit's result, or the quote's reading when nothing was charged. */
interface StoredPiece {
  row: MailRow;
  balanceCents: number;
}

/** One transaction: the safeguards again under their locks, the piece's row, and its debit. */
async function storePiece(
  deps: Deps,
  auth: AuthContext,
  q: QuotedSubmission,
  piece: PiecePlan & {
    run: MailRunRow | null;
    documentKey: string;
    sourceKey: string | null;
    fingerprint: string;
    idempotencyKey: string | null;
    addressCheck: AddressCheck;
    proofKey: string | null;
    a2aTaskId: string | null;
  },
): Promise<StoredPiece> {
  const { fields: f, probe } = q;
  // A sandbox piece that nothing re-checks (no debit, no daily limit, duplicates allowed, no
  // run) is its single INSERT: no transaction around it (two round trips fewer).
  if (q.testMode && !piece.charge && auth.maxDailyPieces === null && f.allow_duplicate && !piece.run) {
    const facilityId = (await assignFacility(deps.db, q.testMode, auth.memberId)).id;
    const row = await insertMailRow(deps.db, newMailRow(auth, q, { ...piece, facilityId }));
    return { row, balanceCents: q.balanceCents };
  }
  return deps.db.transaction(async (tx) => {
    // Serialise only what the re-checks below need, always in this order: the member's
    // ledger for a debit and spend caps, the key's daily count when it has a limit, and
    // this very letter for duplicate protection. Unrelated submissions of one member
    // (other letters, other recipients, sandbox pieces) then commit side by side.
    // The member lock is taken once here; the debit below is told it is held.
    const memberLock = piece.charge ? await lockMemberRow(tx, auth.memberId!) : null;
    if (auth.maxDailyPieces !== null) await lockName(tx, `mail-daily-pieces:${auth.ownerKey}`);
    if (!f.allow_duplicate)
      await lockName(
        tx,
        `mail-duplicate:${[probe.memberId, probe.agentId, probe.recipientFingerprint, probe.documentSha256, probe.mailClass, probe.testMode].join(':')}`,
      );
    if (piece.run) await lockMailRunForChild(tx, piece.run);
    // Counted again only for a key with a daily limit: without one nothing can refuse.
    if (auth.maxDailyPieces !== null) {
      const again = dailyPiecesRefusal({ limit: auth.maxDailyPieces, used: await piecesLast24h(tx, auth.ownerKey) });
      if (again) throw safeguardRefusal(again);
    }
    if (!f.allow_duplicate) {
      const duplicateId = await checkDuplicate(tx, probe);
      if (duplicateId) throw duplicateRefusal(duplicateId);
    }
    if (piece.charge) {
      const spendAgain = spendRefusal({ ...q.spendCheck, spentLast24hCents: await spentLast24h(tx, auth.memberId!) });
      if (spendAgain) throw safeguardRefusal(spendAgain);
    }
    // Picked again under the facility's lock: a deactivation meanwhile is waited for, not missed.
    const facilityId = (await assignFacility(tx, q.testMode, auth.memberId)).id;
    const row = await insertMailRow(tx, newMailRow(auth, q, { ...piece, facilityId }));
    if (!memberLock) return { row, balanceCents: q.balanceCents };
    const debited = await debit(
      deps,
      tx,
      {
        memberId: auth.memberId!,
        amountCents: q.priceCents,
        entryKey: `debit:mail:${q.id}`,
        referenceType: 'outbound_mail',
        referenceId: q.id,
        description: `Outbound mail ${q.id} (${f.mail_class})`,
      },
      { memberLock },
    );
    return { row, balanceCents: debited.balanceCents };
  });
}

/**
 * Publishes the new piece's first event (mail.submitted or mail.pending_approval) here rather
 * than in the workflow: docs/decisions/0003-submission-publishes-first-event.md. True when
 * published; on a failure the workflow announces it, once by the event key either way.
 * `instructions`, when the version check read them, spare the event reading them again.
 */
async function announcePiece(deps: Deps, row: MailRow, instructions: InstructionsDocument | null): Promise<boolean> {
  if (row.status !== 'submitted' && row.status !== 'pending_approval') return false;
  try {
    mailFaults.announce?.(row.id);
    await publishMailEvent(deps, row, `mail.${row.status}`, [], instructions);
    return true;
  } catch (err) {
    deps.log.warn(
      { err, outbound_mail_id: row.id },
      "publishing the new piece's event failed; its workflow will publish it",
    );
    return false;
  }
}

/** Starts the piece's workflow; a failure leaves the committed (and paid) piece to the reconciler. */
async function startPieceWorkflow(deps: Deps, row: MailRow, announced: boolean): Promise<void> {
  try {
    // Bounded: when Temporal is unreachable the caller gets its 201 after a few seconds,
    // not after the client's own retries give up.
    await deps.temporal.connection.withDeadline(Date.now() + WORKFLOW_START_DEADLINE_MS, () =>
      startMailWorkflow(deps, row, { announced }),
    );
  } catch (err) {
    // The piece is committed (and paid): the reconciler starts its workflow shortly.
    deps.log.error(
      { err, outbound_mail_id: row.id },
      'starting the outbound mail workflow failed; the reconciler will start it',
    );
  }
}
