// Steps of the inbound extraction workflow, one per activity of
// activities/inbound-email/inbound-extraction.ts. Each one is idempotent: status moves
// happen only from the expected status, and every step that writes extraction rows first
// deletes the rows it wrote on an earlier attempt (same item or file, same sources).
import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import {
  analyseInbound,
  LOW_CATEGORY_CONFIDENCE,
  TextSource,
  TextSourceName,
} from '../../domain/inbound-email/analysis';
import { extensionOf, familyOfContentType } from '../../domain/inbound-email/message';
import { ocrPageStatus, ocrUnreadable, pageNeedsOcr } from '../../domain/inbound-email/ocr';
import { pickThread, replyReferences, threadByReplyHeaders, ThreadKeys } from '../../domain/inbound-email/thread';
import type { Deps } from '../shared/deps';
import { publishEvent } from '../webhooks/events';
import { docxText, pdfMetadata, pdfPageTexts } from './document-tools';
import { OCR_DPI, OCR_LANGUAGE, ocrImage, OcrRun, ocrPdfPages } from './ocr';
import type { InboundMailFileRow, InboundMailItemRow, PostalThreadRow } from './rows';
import { sqlRows, sqlRun } from '../shared/sql';
import { extendThread, insertThread } from './thread-rows';
import {
  failCapturedItem,
  failUnextractedItem,
  markItemStored,
  setFileStatus,
  setItemAnalysis,
  setItemExtracted,
  setItemThread,
} from './item-rows';

/** Longest text kept in one extraction row (the spec's OCR page limit). */
const TEXT_ROW_MAX = 32_000;

type Tx = Pick<EntityManager, 'query'>;

interface ExtractionRow {
  fileId: string | null;
  source: string;
  field: string;
  value: string;
  confidence: number;
  metadata?: Record<string, unknown>;
}

async function replaceExtractions(
  tx: Tx,
  itemId: string,
  scope: { fileId?: string; sources: string[] },
  rows: ExtractionRow[],
): Promise<void> {
  if (scope.fileId) {
    await sqlRun(tx, `DELETE FROM inbound_extractions WHERE inbound_mail_file_id = $1 AND source = ANY($2)`, [
      scope.fileId,
      scope.sources,
    ]);
  } else {
    await sqlRun(tx, `DELETE FROM inbound_extractions WHERE inbound_mail_item_id = $1 AND source = ANY($2)`, [
      itemId,
      scope.sources,
    ]);
  }
  if (!rows.length) return;
  await sqlRun(
    tx,
    `INSERT INTO inbound_extractions (inbound_mail_item_id, inbound_mail_file_id, source, field, value, confidence, metadata, position)
     SELECT $1, f, s, fld, v, c, m::jsonb, p - 1
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::numeric[], $7::text[]) WITH ORDINALITY AS x(f, s, fld, v, c, m, p)`,
    [
      itemId,
      rows.map((r) => r.fileId),
      rows.map((r) => r.source),
      rows.map((r) => r.field),
      rows.map((r) => r.value.slice(0, TEXT_ROW_MAX)),
      rows.map((r) => Math.max(0, Math.min(1, r.confidence))),
      rows.map((r) => JSON.stringify(r.metadata ?? {})),
    ],
  );
}

const FILE_SOURCES = ['pdf_metadata', 'pdf_text', 'docx_text', 'plain_text', 'content_sniffer', 'extraction_error'];
const ANALYSIS_SOURCES = [
  'heuristic_classifier',
  'address_parser',
  'date_extractor',
  'amount_extractor',
  'reference_extractor',
  'field_extractor',
];

async function loadFile(deps: Deps, fileId: string): Promise<InboundMailFileRow> {
  const [file] = await sqlRows<InboundMailFileRow>(deps.db, `SELECT * FROM inbound_mail_files WHERE id = $1`, [fileId]);
  if (!file) throw new Error(`inbound file ${fileId} not found`);
  return file;
}

async function itemEvent(
  deps: Deps,
  itemId: string,
  eventType: 'inbound.received' | 'inbound.context_ready',
  ocrStatus: string | null,
): Promise<void> {
  const [item] = await sqlRows<Pick<InboundMailItemRow, 'member_id' | 'agent_id' | 'test_mode'>>(
    deps.db,
    `SELECT member_id, agent_id, test_mode FROM inbound_mail_items WHERE id = $1`,
    [itemId],
  );
  await publishEvent(deps, {
    eventKey: `inbound_mail_item:${itemId}:${eventType}`,
    memberId: item.member_id,
    agentId: item.agent_id,
    eventType,
    testMode: item.test_mode,
    objectType: 'inbound_mail_item',
    objectId: itemId,
    payload: { item_id: itemId, agent_id: item.agent_id, source_domain: 'forwarded_email', ocr_status: ocrStatus },
  });
}

export async function inboundItemCommitted(deps: Deps, itemId: string): Promise<boolean> {
  const rows = await sqlRows<{ '?column?': number }>(deps.db, `SELECT 1 FROM inbound_mail_items WHERE id = $1`, [
    itemId,
  ]);
  return rows.length > 0;
}

/** The intake never committed this item: remove what it wrote (unless the row appeared after all). */
export async function discardUncommittedInbound(
  deps: Deps,
  input: { itemId: string; storageKeys: string[] },
): Promise<boolean> {
  const rows = await sqlRows<{ '?column?': number }>(deps.db, `SELECT 1 FROM inbound_mail_items WHERE id = $1`, [
    input.itemId,
  ]);
  if (rows.length) return false;
  for (const key of input.storageKeys) await deps.storage.remove(key);
  return true;
}

/** captured -> stored once every object reads back with its recorded size and SHA-256. */
export async function verifyInboundStorage(
  deps: Deps,
  itemId: string,
): Promise<{ status: 'stored' | 'failed'; attachmentIds: string[] }> {
  const files = await sqlRows<InboundMailFileRow>(
    deps.db,
    `SELECT * FROM inbound_mail_files WHERE inbound_mail_item_id = $1 ORDER BY position`,
    [itemId],
  );
  const [item] = await sqlRows<Pick<InboundMailItemRow, 'status'>>(
    deps.db,
    `SELECT status FROM inbound_mail_items WHERE id = $1`,
    [itemId],
  );
  const attachmentIds = files.filter((f) => f.kind === 'attachment').map((f) => f.id);
  if (item.status !== 'captured') return { status: item.status === 'failed' ? 'failed' : 'stored', attachmentIds };
  for (const f of files) {
    const body = await deps.storage.get(f.storage_key);
    const sha = createHash('sha256').update(body).digest('hex');
    if (body.length !== Number(f.size_bytes) || sha !== f.sha256) {
      await failCapturedItem(
        deps.db,
        itemId,
        `stored object ${f.filename} does not match its recorded size and SHA-256`,
      );
      return { status: 'failed', attachmentIds };
    }
  }
  await markItemStored(deps.db, itemId);
  await itemEvent(deps, itemId, 'inbound.received', null);
  return { status: 'stored', attachmentIds };
}

/** Lineage rows for the email's own subject and body text. */
export async function extractInboundEmailText(deps: Deps, itemId: string): Promise<void> {
  const [item] = await sqlRows<Pick<InboundMailItemRow, 'subject' | 'body_text'> & { raw_file_id: string }>(
    deps.db,
    `SELECT i.subject, i.body_text, f.id AS raw_file_id FROM inbound_mail_items i
           JOIN inbound_mail_files f ON f.inbound_mail_item_id = i.id AND f.kind = 'raw_email' WHERE i.id = $1`,
    [itemId],
  );
  const rows: ExtractionRow[] = [];
  if (item.subject)
    rows.push({
      fileId: item.raw_file_id,
      source: 'email_subject',
      field: 'subject',
      value: item.subject,
      confidence: 1,
    });
  if (item.body_text.trim())
    rows.push({
      fileId: item.raw_file_id,
      source: 'email_body',
      field: 'body_text',
      value: item.body_text,
      confidence: 1,
      metadata: { characters: item.body_text.length },
    });
  await deps.db.transaction(async (tx) => {
    await replaceExtractions(tx, itemId, { sources: ['email_subject', 'email_body'] }, rows);
    await setFileStatus(tx, item.raw_file_id, 'extracted');
  });
}

/**
 * Text of one attachment by its real content type: PDF metadata and text layer, DOCX
 * text, plain text. Images and PDF pages without a text layer become pending_ocr;
 * other types are unsupported. A file the tools cannot read is marked failed.
 */
export async function extractInboundFile(deps: Deps, fileId: string): Promise<{ extractionStatus: string }> {
  const file = await loadFile(deps, fileId);
  if (file.extraction_status !== 'pending' && file.extraction_status !== 'pending_ocr')
    return { extractionStatus: file.extraction_status };
  const body = await deps.storage.get(file.storage_key);
  const rows: ExtractionRow[] = [];
  if (file.content_type_mismatch) {
    rows.push({
      fileId,
      source: 'content_sniffer',
      field: 'content_type_mismatch',
      value: file.content_type,
      confidence: 1,
      metadata: {
        declared_content_type: file.declared_content_type,
        extension: extensionOf(file.filename),
        detected_content_type: file.content_type,
      },
    });
  }
  let status: string;
  let pageCount: number | null = null;
  try {
    const family = familyOfContentType(file.content_type);
    if (family === 'pdf') {
      const meta = await pdfMetadata(body);
      pageCount = meta.page_count;
      for (const [field, value] of Object.entries(meta)) {
        if (value !== null) rows.push({ fileId, source: 'pdf_metadata', field, value: String(value), confidence: 1 });
      }
      const pages = await pdfPageTexts(body);
      const scanned: number[] = [];
      pages.forEach(({ text, layout }, i) => {
        if (pageNeedsOcr(text)) {
          scanned.push(i + 1);
          return;
        }
        rows.push({
          fileId,
          source: 'pdf_text',
          field: 'page_text',
          value: text,
          confidence: 1,
          metadata: { page: i + 1 },
        });
        rows.push({
          fileId,
          source: 'pdf_text',
          field: 'page_layout',
          value: layout,
          confidence: 1,
          metadata: { page: i + 1 },
        });
      });
      status = scanned.length ? 'pending_ocr' : 'extracted';
      if (scanned.length)
        rows.push({
          fileId,
          source: 'pdf_text',
          field: 'pages_without_text',
          value: scanned.join(','),
          confidence: 1,
          metadata: { pages: scanned },
        });
    } else if (family === 'image') {
      pageCount = 1;
      status = 'pending_ocr';
    } else if (family === 'docx') {
      rows.push({ fileId, source: 'docx_text', field: 'text', value: await docxText(body), confidence: 1 });
      status = 'extracted';
    } else if (family === 'text') {
      rows.push({ fileId, source: 'plain_text', field: 'text', value: body.toString('utf8'), confidence: 1 });
      status = 'extracted';
    } else {
      status = 'unsupported';
    }
  } catch (err) {
    // Keep the mismatch note; drop partial text from the unreadable file.
    rows.splice(0, rows.length, ...rows.filter((r) => r.source === 'content_sniffer'));
    rows.push({
      fileId,
      source: 'extraction_error',
      field: 'error',
      value: (err as Error).message.slice(0, 500),
      confidence: 1,
    });
    status = 'failed';
  }
  await deps.db.transaction(async (tx) => {
    await replaceExtractions(tx, file.inbound_mail_item_id, { fileId, sources: FILE_SOURCES }, rows);
    await setFileStatus(tx, fileId, status, pageCount);
  });
  return { extractionStatus: status };
}

/**
 * OCR (services/inbound-email/ocr.ts) of an image, or of the PDF pages that have no text layer: per
 * page its reading-order text and its layout, confidence, status and uncertain spans.
 */
export async function ocrInboundFile(
  deps: Deps,
  fileId: string,
  heartbeat: (page: number) => void,
): Promise<{ extractionStatus: string }> {
  const file = await loadFile(deps, fileId);
  if (file.extraction_status !== 'pending_ocr') return { extractionStatus: file.extraction_status };
  const body = await deps.storage.get(file.storage_key);
  const rows: ExtractionRow[] = [];
  let pages: Array<{ page: number; run: OcrRun }>;
  if (familyOfContentType(file.content_type) === 'pdf') {
    const [marker] = await sqlRows<{ metadata: { pages?: number[] } }>(
      deps.db,
      `SELECT metadata FROM inbound_extractions WHERE inbound_mail_file_id = $1 AND source = 'pdf_text' AND field = 'pages_without_text'`,
      [fileId],
    );
    const wanted: number[] = marker?.metadata?.pages ?? [];
    pages = (await ocrPdfPages(deps.config, body, wanted, heartbeat)).map((run, i) => ({ page: wanted[i], run }));
  } else {
    pages = [{ page: 1, run: await ocrImage(deps.config, body, file.content_type.split('/')[1] ?? 'img') }];
    heartbeat(1);
  }
  for (const { page, run } of pages) {
    if (!run.ok) {
      rows.push({
        fileId,
        source: 'extraction_error',
        field: 'ocr_error',
        value: run.message.slice(0, 500),
        confidence: 1,
        metadata: { page, error_code: run.errorCode },
      });
      continue;
    }
    const p = run.page;
    const metadata = {
      page,
      words: p.words,
      unreadable: ocrUnreadable(p),
      status: ocrPageStatus(p),
      uncertain_spans: p.uncertainSpans,
      engine: 'tesseract',
      model: run.model,
      language: OCR_LANGUAGE,
      dpi: OCR_DPI,
    };
    rows.push({ fileId, source: 'ocr', field: 'page_text', value: p.text, confidence: p.confidence, metadata });
    rows.push({
      fileId,
      source: 'ocr',
      field: 'page_layout',
      value: p.layout,
      confidence: p.confidence,
      metadata: { page, unreadable: metadata.unreadable },
    });
  }
  const status = pages.some(({ run }) => run.ok && !ocrUnreadable(run.page)) ? 'extracted' : 'failed';
  await deps.db.transaction(async (tx) => {
    await sqlRun(
      tx,
      `DELETE FROM inbound_extractions WHERE inbound_mail_file_id = $1 AND source = 'extraction_error' AND field = 'ocr_error'`,
      [fileId],
    );
    await replaceExtractions(
      tx,
      file.inbound_mail_item_id,
      { fileId, sources: ['ocr'] },
      rows.filter((r) => r.source === 'ocr'),
    );
    const errors = rows.filter((r) => r.source === 'extraction_error');
    if (errors.length) {
      await sqlRun(
        tx,
        `INSERT INTO inbound_extractions (inbound_mail_item_id, inbound_mail_file_id, source, field, value, confidence, metadata, position)
             SELECT $1, $2, 'extraction_error', 'ocr_error', v, 1, m::jsonb, p - 1 FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS x(v, m, p)`,
        [file.inbound_mail_item_id, fileId, errors.map((e) => e.value), errors.map((e) => JSON.stringify(e.metadata))],
      );
    }
    await setFileStatus(tx, fileId, status);
  });
  return { extractionStatus: status };
}

/** Category, action, parties, deadlines, key facts and summary from the stored texts. */
export async function analyseInboundItem(
  deps: Deps,
  itemId: string,
): Promise<{ threadKeys: ThreadKeys; threadTitle: string }> {
  const [item] = await sqlRows<
    Pick<InboundMailItemRow, 'subject' | 'body_text' | 'from_name' | 'from_address'> & {
      alias_email: string;
    }
  >(
    deps.db,
    `SELECT i.subject, i.body_text, i.from_name, i.from_address, a.alias_local_part || '@' || a.domain AS alias_email
           FROM inbound_mail_items i JOIN inbound_forwarding_aliases a ON a.id = i.alias_id WHERE i.id = $1`,
    [itemId],
  );
  const rows = await sqlRows<{
    file_id: string;
    field: 'page_text' | 'page_layout' | 'text';
    source: string;
    value: string;
    confidence: number;
    metadata: { unreadable?: boolean } | null;
  }>(
    deps.db,
    `SELECT e.inbound_mail_file_id AS file_id, e.field, e.source, e.value, e.confidence::float AS confidence, e.metadata
           FROM inbound_extractions e JOIN inbound_mail_files f ON f.id = e.inbound_mail_file_id
          WHERE e.inbound_mail_item_id = $1 AND e.field IN ('page_text', 'page_layout', 'text') AND e.source IN ('pdf_text', 'ocr', 'docx_text', 'plain_text')
          ORDER BY f.position, COALESCE((e.metadata->>'page')::int, 0), e.position`,
    [itemId],
  );
  const [{ attachments }] = await sqlRows<{ attachments: number }>(
    deps.db,
    `SELECT count(*)::int AS attachments FROM inbound_mail_files WHERE inbound_mail_item_id = $1 AND kind = 'attachment'`,
    [itemId],
  );
  // One text (and layout) per file: its pages in order; OCR confidence is the lowest of its readable pages.
  const documents: TextSource[] = [];
  for (const r of rows) {
    if (r.source === 'ocr' && r.metadata?.unreadable) continue;
    let doc = documents[documents.length - 1];
    if (!doc || doc.fileId !== r.file_id || doc.source !== r.source) {
      doc = { source: r.source as TextSourceName, fileId: r.file_id, text: '', confidence: r.confidence };
      documents.push(doc);
    }
    if (r.field === 'page_layout') {
      doc.layout = doc.layout === undefined ? r.value : `${doc.layout}\n\n${r.value}`;
    } else {
      doc.text = doc.text ? `${doc.text}\n\n${r.value}` : r.value;
      doc.confidence = Math.min(doc.confidence, r.confidence);
    }
  }
  const a = analyseInbound({
    subject: item.subject,
    body: item.body_text,
    fromName: item.from_name,
    fromAddress: item.from_address,
    aliasEmail: item.alias_email,
    hasAttachments: attachments > 0,
    documents,
  });
  await deps.db.transaction(async (tx) => {
    await replaceExtractions(tx, itemId, { sources: ANALYSIS_SOURCES }, a.extractions);
    await sqlRun(tx, `DELETE FROM inbound_reply_contacts WHERE inbound_mail_item_id = $1`, [itemId]);
    const c = a.replyContact;
    if (c) {
      await sqlRun(
        tx,
        `INSERT INTO inbound_reply_contacts (inbound_mail_item_id, name, line1, line2, city, state, postal_code, country, source_type, verification_status, confidence)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [
          itemId,
          c.name,
          c.line1,
          c.line2,
          c.city,
          c.state,
          c.postal_code,
          c.country,
          c.source_type,
          c.verification_status,
          c.confidence,
        ],
      );
    }
    await setItemAnalysis(tx, [
      itemId,
      a.category,
      a.suggestedAction,
      a.summary,
      JSON.stringify(a.sender),
      JSON.stringify(a.recipient),
      JSON.stringify(a.deadlines),
      JSON.stringify(a.keyFacts),
    ]);
  });
  return { threadKeys: a.threadKeys, threadTitle: a.threadTitle };
}

/** Links the item to the member's best-matching postal thread, or opens a new one. */
export async function matchInboundThread(
  deps: Deps,
  input: {
    itemId: string;
    threadKeys: ThreadKeys;
    threadTitle: string;
  },
): Promise<{ threadId: string; created: boolean }> {
  return deps.db.transaction(async (tx) => {
    const [item] = await sqlRows<
      Pick<
        InboundMailItemRow,
        'id' | 'member_id' | 'agent_id' | 'test_mode' | 'thread_id' | 'category' | 'summary' | 'received_at' | 'headers'
      >
    >(
      tx,
      `SELECT id, member_id, agent_id, test_mode, thread_id, category, summary, received_at, headers FROM inbound_mail_items WHERE id = $1 FOR UPDATE`,
      [input.itemId],
    );
    if (item.thread_id) return { threadId: item.thread_id, created: false };
    // One matcher at a time per member, so two letters from one sender cannot open two threads.
    await sqlRun(tx, `SELECT pg_advisory_xact_lock(hashtext('postal-thread:' || $1::text))`, [item.member_id]);
    // A reply names its parent by Message-ID: that beats every heuristic below.
    const references = replyReferences(item.headers ?? {});
    const threaded = references.length
      ? await sqlRows<{ message_id: string; thread_id: string }>(
          tx,
          `SELECT i.message_id, i.thread_id FROM inbound_mail_items i JOIN postal_threads t ON t.id = i.thread_id
            WHERE i.member_id = $1 AND i.agent_id IS NOT DISTINCT FROM $2 AND i.test_mode = $3 AND i.message_id = ANY($4) AND t.status <> 'archived'`,
          [item.member_id, item.agent_id, item.test_mode, references],
        )
      : [];
    let match = threadByReplyHeaders(
      references,
      threaded.map((r) => ({ messageId: r.message_id, threadId: r.thread_id })),
    );
    if (!match) {
      const candidates = await sqlRows<
        Pick<PostalThreadRow, 'id' | 'sender_keys' | 'subject_keys' | 'reference_keys' | 'last_event_at'>
      >(
        tx,
        `SELECT id, sender_keys, subject_keys, reference_keys, last_event_at FROM postal_threads
              WHERE member_id = $1 AND agent_id IS NOT DISTINCT FROM $2 AND test_mode = $3 AND status <> 'archived'`,
        [item.member_id, item.agent_id, item.test_mode],
      );
      match = pickThread(
        input.threadKeys,
        candidates.map(
          (c: {
            id: string;
            sender_keys: string[];
            subject_keys: string[];
            reference_keys: string[];
            last_event_at: Date;
          }) => ({
            id: c.id,
            senderKeys: c.sender_keys,
            subjectKeys: c.subject_keys,
            referenceKeys: c.reference_keys,
            lastEventAt: c.last_event_at,
          }),
        ),
      );
    }
    const k = input.threadKeys;
    let threadId: string;
    if (match) {
      threadId = match.id;
      await extendThread(tx, threadId, k, item.summary, item.received_at);
    } else {
      const created = await insertThread(tx, [
        item.member_id,
        item.agent_id,
        item.test_mode,
        input.threadTitle,
        item.category ?? 'other',
        item.summary,
        k.senderKeys,
        k.subjectKeys,
        k.referenceKeys,
        item.received_at,
      ]);
      threadId = created.id;
    }
    await setItemThread(tx, input.itemId, threadId);
    await replaceExtractions(tx, input.itemId, { sources: ['thread_matcher'] }, [
      {
        fileId: null,
        source: 'thread_matcher',
        field: 'postal_mail_thread_id',
        value: threadId,
        confidence: match ? match.score : 1,
        metadata: {
          matched_existing: Boolean(match),
          reasons: match?.reasons ?? [],
          keys: k,
          reply_references: references,
        },
      },
    ]);
    return { threadId, created: !match };
  });
}

/** stored -> extracted, or needs_review with the reasons a person should look. */
export async function finishInboundItem(deps: Deps, itemId: string): Promise<{ status: 'extracted' | 'needs_review' }> {
  const files = await sqlRows<Pick<InboundMailFileRow, 'kind' | 'extraction_status' | 'content_type_mismatch'>>(
    deps.db,
    `SELECT kind, extraction_status, content_type_mismatch FROM inbound_mail_files WHERE inbound_mail_item_id = $1`,
    [itemId],
  );
  const [ocr] = await sqlRows<{ unreadable: number; low_confidence: number; pages: number }>(
    deps.db,
    `SELECT count(*) FILTER (WHERE (metadata->>'unreadable')::boolean)::int AS unreadable,
                count(*) FILTER (WHERE NOT (metadata->>'unreadable')::boolean AND metadata->>'status' = 'needs_review')::int AS low_confidence,
                count(*)::int AS pages
           FROM inbound_extractions WHERE inbound_mail_item_id = $1 AND source = 'ocr' AND field = 'page_text'`,
    [itemId],
  );
  const [category] = await sqlRows<{ confidence: number }>(
    deps.db,
    `SELECT confidence::float AS confidence FROM inbound_extractions WHERE inbound_mail_item_id = $1 AND source = 'heuristic_classifier' AND field = 'category'`,
    [itemId],
  );
  const reasons: string[] = [];
  if (files.some((f: { extraction_status: string }) => f.extraction_status === 'failed'))
    reasons.push('file_extraction_failed');
  if (ocr.unreadable > 0) reasons.push('ocr_unreadable');
  if (ocr.low_confidence > 0) reasons.push('ocr_low_confidence');
  if (files.some((f: { extraction_status: string }) => f.extraction_status === 'unsupported'))
    reasons.push('unsupported_attachment');
  if (files.some((f: { content_type_mismatch: boolean }) => f.content_type_mismatch))
    reasons.push('attachment_content_type_mismatch');
  if (!category || category.confidence < LOW_CATEGORY_CONFIDENCE) reasons.push('low_confidence_category');
  const status = reasons.length ? 'needs_review' : 'extracted';
  await setItemExtracted(deps.db, itemId, status, JSON.stringify(reasons));
  const ocrStatus = ocr.pages === 0 ? null : ocr.unreadable + ocr.low_confidence > 0 ? 'needs_review' : 'ready';
  await itemEvent(deps, itemId, 'inbound.context_ready', ocrStatus);
  return { status };
}

export async function failInboundItem(deps: Deps, input: { itemId: string; reason: string }): Promise<void> {
  await failUnextractedItem(deps.db, input.itemId, input.reason.slice(0, 1000));
}
