// Physical inbound test setup: a member with packages enabled, agents with keys, a
// facility with its key, a private mailbox, and a letter walked through facility intake.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestApp } from './app';
import { client } from './http';
import { newMember } from './factories';
import { newAgent, newCredential } from './agents';
import { createFacility, insertMemberKey } from '../../services/accounts/accounts';
import { assignMailbox } from '../../services/physical-inbound/facility-intake';
import { enablePackages } from '../../services/physical-inbound/package-custody';

export const ALL_INBOUND_SCOPES = [
  'agent.read',
  'agent.inbox.read',
  'agent.inbox.report',
  'agent.inbox.propose',
  'inbound.item.read',
  'inbound.item.scan.read',
  'package.read',
  'package.write',
  'forward.create',
  'scan.create',
];

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'inbound-pages');
export const fixtureImage = (file: string) => readFileSync(path.join(FIXTURES, file));

export async function waitFor<T>(
  fn: () => Promise<T | null | undefined | false>,
  what: string,
  timeoutMs = 45000,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface World {
  memberKey: string;
  memberTestKey: string;
  memberId: string;
  agentId: string;
  agentKey: string;
  agentTestKey: string;
  otherAgentId: string;
  otherAgentKey: string;
  facilityId: string;
  facilityKey: string;
  mailboxId: string;
}

/** A member (packages enabled) with two agents, a facility and a private mailbox defaulting to the first agent. */
export async function newWorld(app: TestApp, opts: { creditsCents?: number; packages?: boolean } = {}): Promise<World> {
  const member = await newMember(app.deps, { creditsCents: opts.creditsCents ?? 100000 });
  const testKey = await app.deps.db.transaction((tx) =>
    insertMemberKey(tx, member.member_id, { name: 'test', environment: 'test' }),
  );
  const agent = await newAgent(app.baseUrl, member.key);
  const other = await newAgent(app.baseUrl, member.key);
  const live = await newCredential(app.baseUrl, member.key, agent.id, { scopes: ALL_INBOUND_SCOPES });
  const test = await newCredential(app.baseUrl, member.key, agent.id, {
    scopes: ALL_INBOUND_SCOPES,
    environment: 'test',
  });
  const otherLive = await newCredential(app.baseUrl, member.key, other.id, { scopes: ALL_INBOUND_SCOPES });
  const facility = await createFacility(app.deps, `Facility ${member.member_id.slice(0, 6)}`);
  const mailbox = await assignMailbox(app.deps, {
    memberId: member.member_id,
    agentId: agent.id,
    facilityId: facility.facility_id,
  });
  if (opts.packages !== false) await enablePackages(app.deps, member.member_id);
  return {
    memberKey: member.key,
    memberTestKey: testKey.key,
    memberId: member.member_id,
    agentId: agent.id,
    agentKey: live.key,
    agentTestKey: test.key,
    otherAgentId: other.id,
    otherAgentKey: otherLive.key,
    facilityId: facility.facility_id,
    facilityKey: facility.key,
    mailboxId: mailbox.mailbox_id,
  };
}

export function photoForm(file = 'sample-envelope.png', photoType = 'sealed_exterior'): FormData {
  const form = new FormData();
  form.append('photo', new Blob([fixtureImage(file)], { type: 'image/png' }), file);
  form.append('photo_type', photoType);
  return form;
}

/** What facility intake needs: the facility's key and the member's mailbox there. */
export type IntakeTarget = Pick<World, 'facilityKey' | 'mailboxId'>;

/** Facility intake: draft -> sealed-exterior photo -> match -> commit. Returns the committed item id. */
export async function receivePiece(
  app: TestApp,
  w: IntakeTarget,
  opts: {
    kind?: 'letter' | 'parcel';
    agentId?: string;
    carrier?: string;
    weightOz?: number;
    tracking?: string;
    sender?: string;
  } = {},
) {
  return (await commitPiece(app, w, opts)).item.id as string;
}

/** Facility intake like receivePiece; returns the commit answer (item, assignment, arrival). */
export async function commitPiece(app: TestApp, w: IntakeTarget, opts: Parameters<typeof receivePiece>[2] = {}) {
  const api = client(app.baseUrl);
  const key = w.facilityKey;
  const draft = await api('POST', '/v1/facility/inbound/drafts', {
    key,
    json: {
      kind: opts.kind ?? 'letter',
      carrier: opts.carrier ?? 'usps',
      tracking_number: opts.tracking ?? null,
      weight_oz: opts.weightOz ?? 1.2,
      sender_name: opts.sender ?? 'Acme Insurance',
      recipient_name: 'Test Member',
    },
  });
  if (draft.status !== 201) throw new Error(`draft: ${draft.status} ${JSON.stringify(draft.body)}`);
  const id = draft.body.draft.id;
  const photo = await api('POST', `/v1/facility/inbound/drafts/${id}/exterior`, { key, form: photoForm() });
  if (photo.status !== 201) throw new Error(`exterior: ${photo.status} ${JSON.stringify(photo.body)}`);
  const match = await api('POST', `/v1/facility/inbound/drafts/${id}/match`, {
    key,
    json: {
      mailbox_id: w.mailboxId,
      expected_version: photo.body.draft.version,
      ...(opts.agentId ? { agent_id: opts.agentId } : {}),
    },
  });
  if (match.status !== 200) throw new Error(`match: ${match.status} ${JSON.stringify(match.body)}`);
  const commit = await api('POST', `/v1/facility/inbound/drafts/${id}/commit`, {
    key,
    json: { expected_version: match.body.draft.version },
  });
  if (commit.status !== 201) throw new Error(`commit: ${commit.status} ${JSON.stringify(commit.body)}`);
  return commit.body;
}

export async function eventsOf(
  app: TestApp,
  objectIds: string[],
): Promise<Array<{ event_type: string; payload: Record<string, unknown>; environment: string; object_id: string }>> {
  return app.deps.db.query(
    `SELECT event_type, payload, environment, object_id FROM events WHERE object_id = ANY($1) ORDER BY created_at, id`,
    [objectIds],
  );
}
