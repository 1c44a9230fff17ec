// Handling operations on physical inbound items (forward the original, open & scan,
// discard): what may be proposed, what each costs, which moves the lifecycle allows and
// what the facility must record. Pure, so the handling workflow, the services and the
// unit tests share one copy of every rule.
import type { FieldError } from './errors';
import type { ItemKind } from './inbound-search';
import { isStateCode, toStateCode, ZIP_PATTERN } from './us-states';

export const HANDLING_STATUSES = ['awaiting_member_approval', 'awaiting_facility', 'accepted', 'completed', 'rejected'] as const;
export type HandlingStatus = (typeof HANDLING_STATUSES)[number];
export const OPEN_HANDLING_STATUSES: HandlingStatus[] = ['awaiting_member_approval', 'awaiting_facility', 'accepted'];

/** Action types an agent may name; vault is a future feature and always refused. */
export const HANDLING_ACTION_TYPES = ['forward_original', 'open_and_scan', 'discard', 'vault'] as const;
export type HandlingActionType = Exclude<(typeof HANDLING_ACTION_TYPES)[number], 'vault'>;
export const FORWARD_MAIL_CLASSES = ['priority', 'first_class'] as const;
export type ForwardMailClass = (typeof FORWARD_MAIL_CLASSES)[number];

/** Item custody states from which an item can still be forwarded, opened or discarded. */
export const HANDLEABLE_ITEM_STATUSES = ['received', 'stored', 'held'];

export type HandlingActor = 'member' | 'facility' | 'system';
export type HandlingEvent = 'approve' | 'reject' | 'accept' | 'complete';

/**
 * Which states each actor may reject from. The owner decides only while approval is
 * pending; the facility may refuse until it completes; the system (approval expiry,
 * sandbox sample reset) may close any open operation.
 */
export const REJECTABLE_FROM: Record<HandlingActor, HandlingStatus[]> = {
  member: ['awaiting_member_approval'],
  facility: ['awaiting_facility', 'accepted'],
  system: OPEN_HANDLING_STATUSES,
};

export function isOpenHandlingStatus(status: string): boolean {
  return (OPEN_HANDLING_STATUSES as string[]).includes(status);
}

/** The state an event leads to, or null when the move is not allowed from `from`. */
export function nextHandlingStatus(from: HandlingStatus, event: HandlingEvent, actor: HandlingActor): HandlingStatus | null {
  switch (event) {
    case 'approve':
      return actor === 'member' && from === 'awaiting_member_approval' ? 'awaiting_facility' : null;
    case 'accept':
      return actor === 'facility' && from === 'awaiting_facility' ? 'accepted' : null;
    case 'complete':
      return actor === 'facility' && from === 'accepted' ? 'completed' : null;
    case 'reject':
      return REJECTABLE_FROM[actor].includes(from) ? 'rejected' : null;
  }
}

// Prices (integer cents). The spec names none for inbound handling; these are the
// service's list prices, shown as a quote before anything is charged.
export const HANDLING_PRICES = {
  openAndScan: { letter: 500, parcel: 1500 } as Record<ItemKind, number>,
  forwardHandling: 250,
  firstClassLetterPostage: 200,
  priorityBasePostage: 1500,
  /** Priority postage per started pound above the first. */
  priorityPerExtraPound: 300,
  discard: 0,
};

export interface HandlingQuote {
  amount_cents: number;
  handling_cents: number;
  postage_cents: number;
}

export function quoteHandling(input: { kind: ItemKind; actionType: HandlingActionType; mailClass?: ForwardMailClass | null; weightOz?: number | null }): HandlingQuote {
  if (input.actionType === 'open_and_scan') {
    const handling = HANDLING_PRICES.openAndScan[input.kind];
    return { amount_cents: handling, handling_cents: handling, postage_cents: 0 };
  }
  if (input.actionType === 'discard') return { amount_cents: HANDLING_PRICES.discard, handling_cents: HANDLING_PRICES.discard, postage_cents: 0 };
  let postage: number;
  if (input.mailClass === 'first_class') {
    postage = HANDLING_PRICES.firstClassLetterPostage;
  } else {
    const pounds = Math.max(1, Math.ceil((input.weightOz ?? 0) / 16));
    postage = HANDLING_PRICES.priorityBasePostage + (pounds - 1) * HANDLING_PRICES.priorityPerExtraPound;
  }
  return { amount_cents: HANDLING_PRICES.forwardHandling + postage, handling_cents: HANDLING_PRICES.forwardHandling, postage_cents: postage };
}

export interface Destination {
  name: string;
  address_line1: string;
  address_line2: string | null;
  city: string;
  state: string;
  postal_code: string;
  country: string;
}

export interface ProposalInput {
  action_type: (typeof HANDLING_ACTION_TYPES)[number];
  expected_version: number;
  confirmed?: boolean;
  destructive_confirmed?: boolean;
  mail_class?: ForwardMailClass | null;
  untracked_acknowledged?: boolean;
  destination?: {
    name: string; address_line1: string; address_line2?: string | null; city: string; state: string; postal_code: string; country?: string;
  } | null;
}

export interface FrozenProposal {
  action_type: HandlingActionType;
  mail_class: ForwardMailClass | null;
  untracked_acknowledged: boolean;
  destination: Destination | null;
}

export type ProposalCheck =
  | { ok: true; proposal: FrozenProposal }
  | { ok: false; kind: 'invalid'; fields: FieldError[] }
  | { ok: false; kind: 'inactive' | 'unavailable'; message: string };

/** Why an action cannot be taken on this item now, or null when it can. */
export function unavailableReason(item: { status: string }): string | null {
  return HANDLEABLE_ITEM_STATUSES.includes(item.status) ? null : `the item is ${item.status}`;
}

/**
 * Checks an agent's proposal (agents may only propose: confirmed and
 * destructive_confirmed must be false) and freezes what it asks for.
 */
export function checkProposal(input: ProposalInput, item: { kind: ItemKind; status: string }): ProposalCheck {
  if (input.action_type === 'vault') {
    return { ok: false, kind: 'inactive', message: 'Vault is an inactive future feature; no vault operation can be proposed.' };
  }
  const fields: FieldError[] = [];
  if (input.confirmed === true) fields.push({ path: 'confirmed', message: 'agents may only propose (confirmed false); the owner confirms' });
  if (input.destructive_confirmed === true) {
    fields.push({ path: 'destructive_confirmed', message: 'only the owner can confirm a destructive action (send false)' });
  }
  const actionType = input.action_type;
  let destination: Destination | null = null;
  let mailClass: ForwardMailClass | null = null;
  let untrackedAcknowledged = false;

  if (actionType === 'forward_original') {
    if (!input.mail_class) fields.push({ path: 'mail_class', message: 'mail_class is required to forward (priority or first_class)' });
    mailClass = input.mail_class ?? null;
    if (mailClass === 'first_class') {
      if (item.kind !== 'letter') fields.push({ path: 'mail_class', message: 'first_class forwarding is for letters only' });
      if (input.untracked_acknowledged !== true) {
        fields.push({ path: 'untracked_acknowledged', message: 'first_class is untracked; send untracked_acknowledged true' });
      }
      untrackedAcknowledged = input.untracked_acknowledged === true;
    }
    const d = input.destination;
    if (!d) {
      fields.push({ path: 'destination', message: 'destination is required to forward' });
    } else {
      const country = (d.country ?? 'US').trim().toUpperCase();
      if (country !== 'US') fields.push({ path: 'destination.country', message: 'forwarding is to US destinations only (country US)' });
      const state = toStateCode(d.state);
      if (!state || !isStateCode(state)) fields.push({ path: 'destination.state', message: 'must be a US state code' });
      const zip = d.postal_code.trim();
      if (!ZIP_PATTERN.test(zip)) fields.push({ path: 'destination.postal_code', message: 'must be a 5-digit or ZIP+4 code' });
      for (const key of ['name', 'address_line1', 'city'] as const) {
        if (!d[key].trim()) fields.push({ path: `destination.${key}`, message: 'must not be blank' });
      }
      destination = {
        name: d.name.trim(), address_line1: d.address_line1.trim(), address_line2: d.address_line2?.trim() || null,
        city: d.city.trim(), state: state ?? d.state, postal_code: zip, country,
      };
    }
  } else {
    if (input.destination) fields.push({ path: 'destination', message: `destination applies only to forward_original` });
    if (input.mail_class) fields.push({ path: 'mail_class', message: `mail_class applies only to forward_original` });
  }
  if (fields.length) return { ok: false, kind: 'invalid', fields };

  const reason = unavailableReason(item);
  if (reason) return { ok: false, kind: 'unavailable', message: `${actionType} is not available: ${reason}.` };
  return { ok: true, proposal: { action_type: actionType, mail_class: mailClass, untracked_acknowledged: untrackedAcknowledged, destination } };
}

export interface HandlingCapability {
  action_type: (typeof HANDLING_ACTION_TYPES)[number];
  available: boolean;
  reason: string | null;
  mail_classes?: ForwardMailClass[];
  quote?: HandlingQuote | null;
  requires_owner_confirmation: boolean;
  requires_staff_attestation: boolean;
}

export function handlingCapabilities(item: { kind: ItemKind; status: string; weightOz: number | null }, openOperation: boolean): HandlingCapability[] {
  const reason = openOperation ? 'another handling operation on this item is still open' : unavailableReason(item);
  const base = () => ({ available: reason === null, reason });
  const mailClasses: ForwardMailClass[] = item.kind === 'letter' ? ['priority', 'first_class'] : ['priority'];
  return [
    {
      action_type: 'forward_original', ...base(), mail_classes: mailClasses,
      quote: quoteHandling({ kind: item.kind, actionType: 'forward_original', mailClass: 'priority', weightOz: item.weightOz }),
      requires_owner_confirmation: true, requires_staff_attestation: false,
    },
    {
      action_type: 'open_and_scan', ...base(),
      quote: quoteHandling({ kind: item.kind, actionType: 'open_and_scan' }),
      requires_owner_confirmation: true, requires_staff_attestation: false,
    },
    {
      action_type: 'discard', ...base(),
      quote: quoteHandling({ kind: item.kind, actionType: 'discard' }),
      requires_owner_confirmation: true, requires_staff_attestation: true,
    },
    { action_type: 'vault', available: false, reason: 'inactive future feature', quote: null, requires_owner_confirmation: true, requires_staff_attestation: false },
  ];
}

export interface FacilityDecisionInput {
  decision: 'accept' | 'complete' | 'reject';
  tracking_number?: string | null;
  attestation?: string | null;
  reason?: string | null;
}

/**
 * What the facility must record for a decision: priority forwarding completes only with
 * a tracking number; discard completes only with a staff attestation; open & scan
 * completes by fulfilling its scan request, not by a decision.
 */
export function checkFacilityDecision(op: { action_type: HandlingActionType; mail_class: ForwardMailClass | null }, d: FacilityDecisionInput): FieldError[] {
  const fields: FieldError[] = [];
  if (d.decision === 'complete') {
    if (op.action_type === 'open_and_scan') {
      fields.push({ path: 'decision', message: 'open_and_scan completes when its scan request is fulfilled (POST /v1/facility/scan-requests/{id}/fulfil)' });
    }
    if (op.action_type === 'forward_original' && op.mail_class === 'priority' && !d.tracking_number?.trim()) {
      fields.push({ path: 'tracking_number', message: 'priority forwarding needs the tracking number on completion' });
    }
    if (op.action_type === 'forward_original' && op.mail_class === 'first_class' && d.tracking_number) {
      fields.push({ path: 'tracking_number', message: 'first_class forwarding is untracked; send no tracking number' });
    }
    if (op.action_type === 'discard' && !d.attestation?.trim()) {
      fields.push({ path: 'attestation', message: 'discard needs a staff attestation on completion' });
    }
  }
  if (d.decision === 'reject' && !d.reason?.trim()) fields.push({ path: 'reason', message: 'a reason is required to reject' });
  return fields;
}

/** The custody state an item moves to when an operation is approved, or null to keep it. */
export function itemStatusOnApproval(actionType: HandlingActionType): string | null {
  return actionType === 'forward_original' ? 'forwarding_requested' : null;
}

/** The custody state an item ends in when an operation completes, or null to keep it. */
export function itemStatusOnCompletion(actionType: HandlingActionType): string | null {
  if (actionType === 'forward_original') return 'forwarded';
  if (actionType === 'discard') return 'disposed';
  return null;
}
