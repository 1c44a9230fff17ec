// Packages: physical inbound custody (letters and parcels held at the member's private
// mailbox), account-enabled and live-only. A package is a physical inbound item seen
// through the custody API; this module answers the list, the detail, photos, tags and
// notes. Actions, forwarding and scans are services/physical-inbound/package-actions.ts;
// the checks every request makes are package-custody.ts. Another agent's package is refused with 403.
import { pagination, paginationWithNext } from '../../domain/shared/pagination';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { assertAgentOfMember } from '../shared/scoping';
import { errors } from '../../domain/shared/errors';
import { sourcesKind } from '../../domain/physical-inbound/agent-inbox';
import { Db, ITEM_COLUMNS, ItemColumns, ItemRow, recordActivity, toItemRow } from './item-records';
import { loadItemBundles, ocrPageView } from './scan-bundles';
import { shipmentOfPackage } from './expected-shipments';
import { assertPackagesEnabled, loadPackage, packageSummary, photoCounts } from './package-custody';
import {
  ACTION_SELECT,
  actionView,
  FORWARD_SELECT,
  forwardView,
  PackageAction,
  PackageForward,
} from './package-actions';
import type { InboundItemActivityRow, InboundPhotoRow, PackageNoteRow } from './rows';
import { addPackageTagRow, deletePackageTagRow } from './package-rows';
import { sqlRows } from '../shared/sql';

export interface PackageListQuery {
  agent_id?: string;
  mailbox_id?: string;
  status?: string;
  carrier?: string;
  since?: Date;
  before?: Date;
  limit: number;
  offset: number;
}

export async function listPackages(deps: Deps, auth: AuthContext, query: PackageListQuery) {
  await assertPackagesEnabled(deps, auth);
  let agentId: string;
  if (isAgentKey(auth)) {
    agentId = auth.agentId!;
  } else {
    if (!query.agent_id)
      throw errors.validation([{ path: 'query.agent_id', message: 'agent_id is required with a member key' }]);
    await assertAgentOfMember(deps, auth, query.agent_id);
    agentId = query.agent_id;
  }
  const params: unknown[] = [auth.memberId, agentId];
  const where = [`i.member_id = $1`, `i.agent_id = $2`, `i.environment = 'live'`];
  if (query.mailbox_id) {
    params.push(query.mailbox_id.toUpperCase());
    where.push(`upper(i.mailbox_id) = $${params.length}`);
  }
  if (query.status) {
    params.push(query.status);
    where.push(`i.status = $${params.length}`);
  }
  if (query.carrier) {
    params.push(query.carrier.toLowerCase());
    where.push(`lower(i.carrier) = $${params.length}`);
  }
  if (query.since) {
    params.push(query.since);
    where.push(`i.received_at >= $${params.length}`);
  }
  if (query.before) {
    params.push(query.before);
    where.push(`i.received_at <= $${params.length}`);
  }
  params.push(query.limit, query.offset);
  const rows = await sqlRows<ItemColumns & { total: string }>(
    deps.db,
    `SELECT ${ITEM_COLUMNS}, count(*) OVER () AS total FROM physical_inbound_items i WHERE ${where.join(' AND ')}
      ORDER BY i.received_at DESC, i.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && query.offset > 0) {
    const [c] = await sqlRows<{ total: string }>(
      deps.db,
      `SELECT count(*) AS total FROM physical_inbound_items i WHERE ${where.join(' AND ')}`,
      params.slice(0, -2),
    );
    total = Number(c.total);
  }
  const items = rows.map(toItemRow);
  const counts = await photoCounts(
    deps.db,
    items.map((i) => i.id),
  );
  return {
    packages: items.map((i) => packageSummary(i, counts.get(i.id) ?? 0)),
    pagination: pagination(total, query.limit, query.offset),
  };
}

// ---------------------------------------------------------------------------------------
// Photos

export const PACKAGE_PHOTO_TYPES = ['sealed_exterior', 'label', 'scan_envelope', 'scan_letter'] as const;

async function packagePhotos(deps: Deps, item: ItemRow, photoType?: string) {
  const expiresAt = new Date(Date.now() + 3600_000).toISOString();
  const intake = await sqlRows<InboundPhotoRow>(
    deps.db,
    `SELECT * FROM inbound_photos WHERE item_id = $1 ORDER BY created_at, id`,
    [item.id],
  );
  const bundles = await loadItemBundles(deps.db, item.id);
  const photos = [
    ...(await Promise.all(
      intake.map(async (p) => ({
        id: p.id,
        photo_type: p.photo_type as string,
        content_type: p.content_type,
        size_bytes: p.size_bytes,
        sha256: p.sha256,
        url: await deps.storage.signedUrl(p.storage_key),
        url_expires_at: expiresAt,
        created_at: p.created_at.toISOString(),
        scan: null,
        ocr: null,
      })),
    )),
    ...(await Promise.all(
      bundles.flatMap((b) =>
        b.pages.map(async (p) => {
          const ocr = ocrPageView(p);
          return {
            id: p.id,
            photo_type: `scan_${p.page_role}`,
            content_type: p.content_type,
            size_bytes: p.size_bytes,
            sha256: p.source_sha256,
            url: await deps.storage.signedUrl(p.storage_key),
            url_expires_at: expiresAt,
            created_at: p.created_at.toISOString(),
            scan: {
              request_id: b.request_id,
              bundle_id: b.id,
              page_number: p.page_number,
              source_kind: sourcesKind({ role: p.page_role, origin: p.origin }),
            },
            ocr: {
              status: ocr.status,
              text: ocr.text,
              is_blank: ocr.is_blank,
              uncertain_spans: ocr.uncertain_spans,
              provider: ocr.provider,
              model: ocr.model,
              completed_at: ocr.completed_at,
              attempts: ocr.attempts,
              error_code: ocr.error_code,
            },
          };
        }),
      ),
    )),
  ];
  return photoType ? photos.filter((p) => p.photo_type === photoType) : photos;
}

export async function listPackagePhotos(deps: Deps, auth: AuthContext, id: string, photoType?: string) {
  const item = await loadPackage(deps, auth, id);
  return { package_id: item.id, photos: await packagePhotos(deps, item, photoType) };
}

// ---------------------------------------------------------------------------------------
// Tags and notes

async function packageTags(db: Db, item: ItemRow) {
  const rows = await sqlRows<{ tag: string; created_at: Date }>(
    db,
    `SELECT tag, created_at FROM package_tags WHERE item_id = $1 ORDER BY created_at, tag`,
    [item.id],
  );
  return {
    package_id: item.id,
    tags: rows.map((r) => ({ tag: r.tag, created_at: r.created_at.toISOString() })),
  };
}

export async function listPackageTags(deps: Deps, auth: AuthContext, id: string) {
  return packageTags(deps.db, await loadPackage(deps, auth, id));
}

export async function addPackageTag(deps: Deps, auth: AuthContext, id: string, tag: string) {
  const item = await loadPackage(deps, auth, id);
  const inserted = await addPackageTagRow(deps.db, item.id, tag);
  if (inserted.length) await recordActivity(deps.db, item, 'tag_added', { tag });
  return { tag, created: inserted.length > 0, ...(await packageTags(deps.db, item)) };
}

export async function removePackageTag(deps: Deps, auth: AuthContext, id: string, tag: string) {
  const item = await loadPackage(deps, auth, id);
  const removed = await deletePackageTagRow(deps.db, item.id, tag);
  if (!removed.length) throw errors.notFound('Tag');
  await recordActivity(deps.db, item, 'tag_removed', { tag });
  return { removed: tag, ...(await packageTags(deps.db, item)) };
}

function noteView(r: PackageNoteRow) {
  return {
    id: r.id,
    package_id: r.item_id,
    note: r.note,
    metadata: r.metadata,
    author: r.author,
    agent_id: r.agent_id,
    created_at: r.created_at.toISOString(),
  };
}

export async function listPackageNotes(
  deps: Deps,
  auth: AuthContext,
  id: string,
  page: { limit: number; offset: number },
) {
  const item = await loadPackage(deps, auth, id);
  const rows = await sqlRows<PackageNoteRow & { total: string }>(
    deps.db,
    `SELECT *, count(*) OVER () AS total FROM package_notes WHERE item_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    [item.id, page.limit, page.offset],
  );
  return {
    package_id: item.id,
    notes: rows.map(noteView),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, page.limit, page.offset),
  };
}

export async function addPackageNote(
  deps: Deps,
  auth: AuthContext,
  id: string,
  note: string,
  metadata?: Record<string, unknown>,
) {
  const item = await loadPackage(deps, auth, id);
  const [row] = await sqlRows<PackageNoteRow>(
    deps.db,
    `INSERT INTO package_notes (item_id, note, metadata, author, agent_id) VALUES ($1, $2, $3, $4, $5) RETURNING *`,
    [
      item.id,
      note,
      metadata ? JSON.stringify(metadata) : null,
      isAgentKey(auth) ? 'agent' : 'member',
      isAgentKey(auth) ? auth.agentId : null,
    ],
  );
  await recordActivity(deps.db, item, 'note_added', { note_id: row.id });
  return { note: noteView(row) };
}

// ---------------------------------------------------------------------------------------
// Detail

export async function getPackage(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadPackage(deps, auth, id);
  const [photos, actions, forwards, tags, notes, events, expectedShipment] = await Promise.all([
    packagePhotos(deps, item),
    sqlRows<PackageAction>(deps.db, `${ACTION_SELECT} WHERE p.item_id = $1 ORDER BY p.created_at DESC, p.id`, [
      item.id,
    ]),
    sqlRows<PackageForward>(deps.db, `${FORWARD_SELECT} WHERE f.item_id = $1 ORDER BY f.created_at DESC, f.id`, [
      item.id,
    ]),
    sqlRows<{ tag: string }>(deps.db, `SELECT tag FROM package_tags WHERE item_id = $1 ORDER BY created_at, tag`, [
      item.id,
    ]),
    sqlRows<{ n: number }>(deps.db, `SELECT count(*)::int AS n FROM package_notes WHERE item_id = $1`, [item.id]),
    sqlRows<Pick<InboundItemActivityRow, 'id' | 'kind' | 'detail' | 'created_at'>>(
      deps.db,
      `SELECT id, kind, detail, created_at FROM inbound_item_activity WHERE item_id = $1 ORDER BY created_at, id`,
      [item.id],
    ),
    shipmentOfPackage(deps.db, item.id),
  ]);
  return {
    package: {
      ...packageSummary(item, photos.length),
      version: item.version,
      label_data: {
        carrier: item.carrier,
        tracking_number: item.tracking_number,
        weight_oz: item.weight_oz,
        sender_name: item.sender_name,
        recipient_name: item.recipient_name,
        mailbox_id: item.mailbox_id,
      },
      photos,
      events: events.map((e) => ({
        id: e.id,
        event_type: e.kind,
        detail: e.detail,
        created_at: e.created_at.toISOString(),
      })),
      actions: actions.map(actionView),
      forwarding_requests: forwards.map(forwardView),
      tags: tags.map((t) => t.tag),
      notes_count: notes[0].n,
      expected_shipment: expectedShipment,
    },
  };
}
