// Print proofs of outbound letters (domain/outbound-mail/print-proof.ts): what the facility
// prints, shown to the sender before paying. A submitted piece's proof is stored beside its
// document (mail/<id>/proof.pdf, `proof_key` on the row): rendered by the submission itself
// when the document is a short PDF (storeSubmissionProof: a few milliseconds on a thread, beside
// the document's upload), else by the worker (activities/outbound-mail/print-proof.ts) once
// the piece is recorded, as for any piece whose submission did not store one; it is handed
// out as a 1-hour signed URL, and the facility gets the same file.
//
// A dry run renders nothing: it stores the document under proofs/dry-run/<day>/documents/<sha256>
// and answers a signed link (1 hour, domain/outbound-mail/dry-run-proof-links.ts) whose first
// GET renders the proof and stores it under proofs/dry-run/<day>/<digest>.pdf, named by what
// it shows (document hash, addresses, print settings) and dated the start of its UTC day, so
// pricing the same letter again that day names the same file. The daily clean-up deletes
// both after two days (docs/decisions/0120-dry-run-proofs-rendered-on-first-request.md).
//
// Rendering runs on a worker thread (print-proof.worker.js): a 200-page PDF or a large
// image takes seconds of CPU in pdf-lib, which would otherwise stall every other request
// (API) or activity (worker) the process is serving.
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Piscina } from 'piscina';
import type { Deps } from '../shared/deps';
import type { DocumentType } from '../../domain/outbound-mail/documents';
import type { MailAddress } from '../../domain/outbound-mail/address';
import { printProofWarnings } from '../../domain/outbound-mail/print-proof';
import type { PrintProof, PrintProofInput } from '../../domain/outbound-mail/print-proof';
import {
  dryRunProofLinkKey,
  readDryRunProofLink,
  signDryRunProofLink,
} from '../../domain/outbound-mail/dry-run-proof-links';
import { codedError, errors } from '../../domain/shared/errors';
import { SIGNED_URL_SECONDS } from '../shared/storage';
import { contentDisposition } from '../../domain/shared/downloads';
import { sha256Hex } from '../../domain/accounts/keys';
import { ensureIntervalSchedule } from '../operations/schedules';
import { MailRow, setProofKey } from './rows';
import {
  DRY_RUN_PROOF_CLEANUP_WORKFLOW,
  dryRunProofCleanupScheduleId,
  DryRunProofCleanupInput,
} from '../../workflows/outbound-mail/contracts';
import { sqlRows } from '../shared/sql';

/** Document types a proof shows (HTML, Markdown and DOCX letters are stored as the PDF they were laid out to). */
const PRINTED_TYPES: readonly string[] = ['pdf', 'jpg', 'png', 'txt', 'csv'] satisfies DocumentType[];

/** Where dry-run proofs live; nothing else is stored under it. */
export const DRY_RUN_PROOF_PREFIX = 'proofs/dry-run/';
/**
 * Dry-run proofs older than this are deleted by the clean-up. A day's proof may be signed
 * until the day ends (1-hour URLs), so two days leave every URL its full hour.
 */
export const DRY_RUN_PROOF_RETENTION_HOURS = 48;
/** Renders waiting for a thread beyond this many are refused (a dry run then answers without a proof). */
const MAX_QUEUED_RENDERS = 32;
/**
 * How long a render may take, waiting for a thread included; past it the thread is stopped.
 * The largest documents render in a few seconds (docs/agents.md, Address check and print proof), so only a document
 * pdf-lib cannot get through meets these: a dry run answers without a proof, a piece keeps none.
 */
export const DRY_RUN_RENDER_TIMEOUT_MS = 20_000;
export const PIECE_RENDER_TIMEOUT_MS = 120_000;
/**
 * Documents a submission renders while it waits: a PDF of a few pages renders in 2-3 ms of
 * CPU (its pages are copied, never decoded, so memory follows its bytes), which costs less
 * than the worker's activity round trip for it (HTML, Markdown and DOCX letters are such PDFs
 * once laid out). Larger ones (up to seconds for 200 pages),
 * images (a 1 MiB PNG can hold 50 megapixels, +500 MB to lay out) and text stay off
 * the request path, with the worker. A render that takes longer than the timeout (a busy
 * machine) is left to the worker too.
 */
export const SUBMISSION_PROOF_MAX_PAGES = 10;
export const SUBMISSION_PROOF_MAX_BYTES = 1024 * 1024;
export const SUBMISSION_RENDER_TIMEOUT_MS = 5_000;

let renderers: Piscina | undefined;

/** Renders a proof on a worker thread, stopping it after timeoutMs. One core stays with the event loop. */
export function renderProofOffThread(input: PrintProofInput, timeoutMs: number): Promise<PrintProof> {
  renderers ??= new Piscina({
    filename: path.join(__dirname, 'print-proof.worker.js'),
    maxThreads: Math.max(1, os.availableParallelism() - 1),
    maxQueue: MAX_QUEUED_RENDERS,
    // Loading the renderer costs a second or two; an idle minute ends the thread, so a
    // process that has stopped serving exits without a close call.
    idleTimeout: 60_000,
    // A runaway render ends its thread (the task fails), never the process.
    resourceLimits: { maxOldGenerationSizeMb: 1536 },
  });
  return renderers.run(input, { signal: AbortSignal.timeout(timeoutMs) });
}

/** The fields of a piece a proof shows: a stored row, or a dry run's validated fields with the return address it would get. */
export interface ProofPiece {
  recipient_name?: string | null;
  recipient_company?: string | null;
  recipient_line1: string;
  recipient_line2?: string | null;
  recipient_city: string;
  recipient_state: string;
  recipient_zip: string;
  recipient_country: string;
  return_name?: string | null;
  return_company?: string | null;
  return_line1?: string | null;
  return_line2?: string | null;
  return_city?: string | null;
  return_state?: string | null;
  return_zip?: string | null;
  mail_class: string;
  color: boolean;
  duplex: boolean;
}

/** The renderer's input: the addresses as sent (never the address check's normalised lines). */
export function proofInput(
  piece: ProofPiece,
  document: { bytes: Uint8Array; type: DocumentType; pageCount: number },
  createdAt: Date,
): PrintProofInput {
  const recipient: MailAddress = {
    name: piece.recipient_name ?? null,
    company: piece.recipient_company ?? null,
    line1: piece.recipient_line1,
    line2: piece.recipient_line2 ?? null,
    city: piece.recipient_city,
    state: piece.recipient_state,
    zip: piece.recipient_zip,
    country: piece.recipient_country,
  };
  // As the record's human_review shows it: an incomplete return address is none.
  const returnAddress: MailAddress | null =
    piece.return_line1 && piece.return_city && piece.return_state && piece.return_zip
      ? {
          name: piece.return_name ?? null,
          company: piece.return_company ?? null,
          line1: piece.return_line1,
          line2: piece.return_line2 ?? null,
          city: piece.return_city,
          state: piece.return_state,
          zip: piece.return_zip,
          country: 'US',
        }
      : null;
  return {
    document: { bytes: document.bytes, kind: document.type, pageCount: document.pageCount },
    recipient,
    returnAddress,
    mailClass: piece.mail_class,
    color: piece.color,
    duplex: piece.duplex,
    createdAt,
  };
}

/** Stores a rendered proof under `key` (its bytes as they are, no copy). */
function putProof(deps: Deps, key: string, proof: PrintProof): Promise<void> {
  return deps.storage.put(
    key,
    Buffer.from(proof.pdf.buffer, proof.pdf.byteOffset, proof.pdf.byteLength),
    'application/pdf',
  );
}

/** The object key of a piece's proof, beside its document. */
export function pieceProofKey(outboundMailId: string): string {
  return `mail/${outboundMailId}/proof.pdf`;
}

/** A fresh 1-hour signed URL of a stored proof, shown inline as proof.pdf. */
export function signedProofUrl(deps: Deps, key: string): Promise<string> {
  return deps.storage.signedUrl(key, {
    contentDisposition: contentDisposition('proof.pdf', { type: 'inline', fallbackName: 'proof.pdf' }),
  });
}

/** The record's proof_url: null until the proof is stored (and for pieces from before proofs). */
export function pieceProofUrl(deps: Deps, row: Pick<MailRow, 'proof_key'>): Promise<string | null> {
  return row.proof_key ? signedProofUrl(deps, row.proof_key) : Promise.resolve(null);
}

/** The dry-run folder of a day: its proofs, and the documents they are rendered from. */
const dryRunDocumentKey = (day: string, sha256: string) => `${DRY_RUN_PROOF_PREFIX}${day}/documents/${sha256}`;

/** A dry-run proof's key: named by what it shows (document hash, addresses, print settings) and its day. */
function dryRunProofKey(input: PrintProofInput, document: { sha256: string; type: DocumentType; pageCount: number }) {
  const shown = { ...input, document: { sha256: document.sha256, type: document.type, pageCount: document.pageCount } };
  return `${DRY_RUN_PROOF_PREFIX}${input.createdAt.toISOString().slice(0, 10)}/${sha256Hex(JSON.stringify(shown))}.pdf`;
}

/** Dry-run documents this process stored, by key (the oldest are forgotten first): a letter priced again is not uploaded again. */
const storedDryRunDocuments = new Set<string>();
const REMEMBERED_DRY_RUN_DOCUMENTS = 1000;

const proofUnavailable = (message: string) => ({ url: null, warnings: [{ code: 'print_proof_unavailable', message }] });

/**
 * A dry run's proof_url: a signed link (1 hour) that renders the proof on its first GET
 * (getDryRunProof). Here only the document is stored, by its hash (once per process and
 * day), and the proof's warnings are worked out from the document's page boxes, an image's
 * orientation and the address blocks' measures, without rendering. A document whose proof
 * cannot be worked out, or that cannot be stored, is no refusal: the dry run answers
 * proof_url null and says why in a warning.
 */
export async function dryRunProof(
  deps: Deps,
  piece: ProofPiece,
  data: Buffer,
  document: { type: DocumentType; pageCount: number; sha256: string },
): Promise<{ url: string | null; warnings: Record<string, unknown>[] }> {
  const day = new Date().toISOString().slice(0, 10);
  const input = proofInput(
    piece,
    { bytes: data, type: document.type, pageCount: document.pageCount },
    new Date(`${day}T00:00:00Z`),
  );
  const documentKey = dryRunDocumentKey(day, document.sha256);
  const storing = storedDryRunDocuments.has(documentKey)
    ? Promise.resolve(true)
    : deps.storage.put(documentKey, data, 'application/octet-stream').then(
        () => {
          storedDryRunDocuments.add(documentKey);
          if (storedDryRunDocuments.size > REMEMBERED_DRY_RUN_DOCUMENTS)
            storedDryRunDocuments.delete(storedDryRunDocuments.values().next().value!);
          return true;
        },
        (err: unknown) => {
          deps.log.warn({ err }, 'storing the document of a dry-run print proof failed');
          return false;
        },
      );
  let found: string[];
  try {
    found = await printProofWarnings(input);
  } catch (err) {
    await storing;
    deps.log.warn({ err }, 'working out a dry-run print proof failed');
    return proofUnavailable(
      'The print proof could not be rendered; the facility prints the document as sent. A real submission is not affected.',
    );
  }
  const warnings = found.map((w) => ({ code: 'print_proof', message: `Print proof: ${w}` }));
  if (!(await storing)) {
    const unavailable = proofUnavailable(
      'The print proof could not be stored right now; send the dry run again to see it.',
    );
    return { url: null, warnings: [...warnings, ...unavailable.warnings] };
  }
  const token = signDryRunProofLink(dryRunProofLinkKey(deps.config.appEncryptionKey), {
    exp: Math.floor(Date.now() / 1000) + SIGNED_URL_SECONDS,
    day,
    document: { sha256: document.sha256, type: document.type, pageCount: document.pageCount },
    recipient: input.recipient,
    returnAddress: input.returnAddress,
    mailClass: input.mailClass,
    color: input.color,
    duplex: input.duplex,
  });
  return { url: `${deps.config.baseUrl}${DRY_RUN_PROOF_PATH}/${token}`, warnings };
}

/** Where proof links point, under the API's base URL. */
export const DRY_RUN_PROOF_PATH = '/v1/mail/dry-run-proofs';

/** Renders of dry-run proofs this process ran (tests count them: concurrent first GETs render once). */
export const dryRunProofRenders = { count: 0 };

/** First GETs of a proof being rendered, by proof key: later ones wait for that render. */
const rendering = new Map<string, Promise<Buffer>>();

/** An object's bytes, or null when the store has no such key (other failures throw 503). */
async function storedObject(deps: Deps, key: string): Promise<Buffer | null> {
  try {
    const out = await deps.storage.client.send(new GetObjectCommand({ Bucket: deps.storage.bucket, Key: key }));
    return Buffer.from(await out.Body!.transformToByteArray());
  } catch (err) {
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
    if (e.name === 'NoSuchKey' || e.$metadata?.httpStatusCode === 404) return null;
    throw errors.unavailable('STORAGE_UNAVAILABLE', `The document store is unavailable: ${(err as Error).message}.`);
  }
}

/**
 * GET of a dry run's proof_url: the proof's PDF, rendered by the first GET (exactly as the
 * submission's own proof is rendered, dated the dry run's day) and stored by what it shows,
 * so later GETs, from any process, read it. Concurrent first GETs in a process share one
 * render; two processes may each render it once, which stores the same bytes. A link that
 * was not signed here is 404 (url_invalid), one past its hour 410 (url_expired); a proof
 * whose document the daily clean-up has deleted is 404 too.
 */
export async function getDryRunProof(deps: Deps, token: string): Promise<Buffer> {
  const reading = readDryRunProofLink(
    dryRunProofLinkKey(deps.config.appEncryptionKey),
    token,
    Math.floor(Date.now() / 1000),
  );
  const again = 'Send the dry run again (POST /v1/mail with dry_run=true) for a fresh proof_url.';
  if (!reading.ok && reading.problem === 'expired')
    throw codedError(410, 'PROOF_URL_EXPIRED', 'This proof_url has expired (proof URLs are valid for 1 hour).', {
      reason: 'url_expired',
      suggestedAction: again,
    });
  if (!reading.ok)
    throw codedError(404, 'PROOF_URL_INVALID', 'This proof_url is not one this service signed.', {
      reason: 'url_invalid',
      suggestedAction: again,
    });
  const claim = reading.claim;
  const piece: ProofPiece = {
    recipient_name: claim.recipient.name,
    recipient_company: claim.recipient.company,
    recipient_line1: claim.recipient.line1,
    recipient_line2: claim.recipient.line2,
    recipient_city: claim.recipient.city,
    recipient_state: claim.recipient.state,
    recipient_zip: claim.recipient.zip,
    recipient_country: claim.recipient.country ?? '',
    return_name: claim.returnAddress?.name,
    return_company: claim.returnAddress?.company,
    return_line1: claim.returnAddress?.line1,
    return_line2: claim.returnAddress?.line2,
    return_city: claim.returnAddress?.city,
    return_state: claim.returnAddress?.state,
    return_zip: claim.returnAddress?.zip,
    mail_class: claim.mailClass,
    color: claim.color,
    duplex: claim.duplex,
  };
  const createdAt = new Date(`${claim.day}T00:00:00Z`);
  const shape = proofInput(piece, { bytes: new Uint8Array(0), ...claim.document }, createdAt);
  const key = dryRunProofKey(shape, claim.document);
  const inFlight = rendering.get(key);
  if (inFlight) return inFlight;
  const render = (async () => {
    const stored = await storedObject(deps, key);
    if (stored) return stored;
    const bytes = await storedObject(deps, dryRunDocumentKey(claim.day, claim.document.sha256));
    if (!bytes)
      throw codedError(404, 'PROOF_NO_LONGER_AVAILABLE', "This proof's document is no longer kept.", {
        reason: 'url_expired',
        suggestedAction: again,
      });
    let proof: PrintProof;
    try {
      dryRunProofRenders.count++;
      proof = await renderProofOffThread(
        { ...shape, document: { ...shape.document, bytes } },
        DRY_RUN_RENDER_TIMEOUT_MS,
      );
    } catch (err) {
      deps.log.warn({ err }, 'rendering a dry-run print proof failed');
      throw errors.unavailable('PROOF_UNAVAILABLE', 'The print proof could not be rendered right now.', {
        retryable: true,
        suggestedAction: 'Retry the same URL in a few seconds; a real submission is not affected.',
      });
    }
    // Not stored (logged): this answer has the proof, and the next GET renders it again.
    await putProof(deps, key, proof).catch((err: unknown) =>
      deps.log.warn({ err }, 'storing a dry-run print proof failed'),
    );
    return Buffer.from(proof.pdf.buffer, proof.pdf.byteOffset, proof.pdf.byteLength);
  })();
  rendering.set(key, render);
  try {
    return await render;
  } finally {
    rendering.delete(key);
  }
}

/**
 * A submission's proof of its new piece (the id the row will get), stored at the piece's
 * key: the key, or null when the document is too large to render here or the render or
 * the upload failed (logged), which leaves the proof to the piece's workflow. Dated
 * `createdAt`, the submission's time. Never throws.
 */
export async function storeSubmissionProof(
  deps: Deps,
  outboundMailId: string,
  piece: ProofPiece,
  document: { bytes: Uint8Array; type: DocumentType; pageCount: number },
  createdAt: Date,
): Promise<string | null> {
  if (
    document.type !== 'pdf' ||
    document.pageCount > SUBMISSION_PROOF_MAX_PAGES ||
    document.bytes.byteLength > SUBMISSION_PROOF_MAX_BYTES
  )
    return null;
  try {
    const proof = await renderProofOffThread(proofInput(piece, document, createdAt), SUBMISSION_RENDER_TIMEOUT_MS);
    const key = pieceProofKey(outboundMailId);
    await putProof(deps, key, proof);
    return key;
  } catch (err) {
    deps.log.warn(
      { err, outbound_mail_id: outboundMailId },
      'the submission could not store the print proof; the worker renders it',
    );
    return null;
  }
}

export type PieceProofOutcome =
  { status: 'rendered' | 'already_rendered'; proofKey: string } | { status: 'not_renderable'; reason: string };

/**
 * Renders and stores a recorded piece's proof once (the worker's activity). Idempotent: a
 * piece that has its proof_key is left alone, and a retry renders the same bytes (the
 * proof's date is the piece's creation). A document the renderer cannot lay out (or not
 * within PIECE_RENDER_TIMEOUT_MS) is reported, not retried; a store or database outage or
 * a full render queue throws, so the activity retries.
 */
export async function renderPieceProof(deps: Deps, outboundMailId: string): Promise<PieceProofOutcome> {
  const [row] = await sqlRows<MailRow>(deps.db, `SELECT * FROM outbound_mail WHERE id = $1`, [outboundMailId]);
  if (!row) return { status: 'not_renderable', reason: 'the piece does not exist' };
  if (row.proof_key) return { status: 'already_rendered', proofKey: row.proof_key };
  // Pieces stored before DOCX letters were laid out at submission kept the Word file itself.
  if (!PRINTED_TYPES.includes(row.document_type))
    return { status: 'not_renderable', reason: `a ${row.document_type.toUpperCase()} document has no print proof` };
  const bytes = await deps.storage.get(row.document_key);
  let proof: PrintProof;
  try {
    proof = await renderProofOffThread(
      proofInput(row, { bytes, type: row.document_type as DocumentType, pageCount: row.page_count }, row.created_at),
      PIECE_RENDER_TIMEOUT_MS,
    );
  } catch (err) {
    // A full queue is load, not the document: the activity retries later.
    if (/queue is at limit/i.test((err as Error).message)) throw err;
    deps.log.warn({ err, outbound_mail_id: row.id }, 'the print proof of a piece could not be rendered');
    return { status: 'not_renderable', reason: (err as Error).message };
  }
  const key = pieceProofKey(row.id);
  await putProof(deps, key, proof);
  await setProofKey(deps.db, row.id, key);
  return { status: 'rendered', proofKey: key };
}

/**
 * Deletes dry-run proofs stored before `before` (the object store's LastModified), a page
 * of keys at a time; `progress` runs after each page. Returns how many were deleted.
 */
export async function deleteOldDryRunProofs(
  deps: Deps,
  before: Date,
  progress: () => void = () => undefined,
): Promise<number> {
  let deleted = 0;
  let token: string | undefined;
  do {
    const page = await deps.storage.client.send(
      new ListObjectsV2Command({ Bucket: deps.storage.bucket, Prefix: DRY_RUN_PROOF_PREFIX, ContinuationToken: token }),
    );
    for (const object of page.Contents ?? []) {
      if (!object.Key || !object.LastModified || object.LastModified >= before) continue;
      await deps.storage.remove(object.Key);
      deleted++;
    }
    progress();
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return deleted;
}

/** Creates or updates the daily clean-up schedule of dry-run proofs on this deployment's task queue. */
export async function ensureDryRunProofCleanupSchedule(deps: Deps): Promise<string> {
  const input: DryRunProofCleanupInput = { retentionHours: DRY_RUN_PROOF_RETENTION_HOURS };
  return ensureIntervalSchedule(deps, {
    scheduleId: dryRunProofCleanupScheduleId(deps.config.taskQueue),
    workflowType: DRY_RUN_PROOF_CLEANUP_WORKFLOW,
    workflowId: `dry-run-proof-cleanup-${deps.config.taskQueue}`,
    args: [input],
    every: '1 day',
    catchupWindow: '1 hour',
  });
}
