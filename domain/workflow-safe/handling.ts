// Handling operations on physical inbound items (forward the original, open & scan,
// discard): what may be proposed, what each costs, which moves the lifecycle allows and
// what the facility must record. Pure, so the handling workflow, the services and the
// unit tests share one copy of every rule.
import type { FieldError } from '../shared/errors';
import type { ItemKind } from '../physical-inbound/search';
import { isStateCode, toStateCode, ZIP_PATTERN } from './us-states';
import { hasVisibleCharacter, hiddenCharacterProblem, VISIBLE_CHARACTER_MESSAGE } from './visible-text';

export const HANDLING_STATUSES = [
  'awaiting_member_approval',
  'awaiting_facility',
  'accepted',
  'completed',
  'rejected',
] as const;
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
export function nextHandlingStatus(
  from: HandlingStatus,
  event: HandlingEvent,
  actor: HandlingActor,
): HandlingStatus | null {
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

export function quoteHandling(input: {
  kind: ItemKind;
  actionType: HandlingActionType;
  mailClass?: ForwardMailClass | null;
  weightOz?: number | null;
}): HandlingQuote {
  if (input.actionType === 'open_and_scan') {
    const handling = HANDLING_PRICES.openAndScan[input.kind];
    return { amount_cents: handling, handling_cents: handling, postage_cents: 0 };
  }
  if (input.actionType === 'discard')
    return { amount_cents: HANDLING_PRICES.discard, handling_cents: HANDLING_PRICES.discard, postage_cents: 0 };
  let postage: number;
  if (input.mailClass === 'first_class') {
    postage = HANDLING_PRICES.firstClassLetterPostage;
  } else {
    const pounds = Math.max(1, Math.ceil((input.weightOz ?? 0) / 16));
    postage = HANDLING_PRICES.priorityBasePostage + (pounds - 1) * HANDLING_PRICES.priorityPerExtraPound;
  }
  return {
    amount_cents: HANDLING_PRICES.forwardHandling + postage,
    handling_cents: HANDLING_PRICES.forwardHandling,
    postage_cents: postage,
  };
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
    name: string;
    address_line1: string;
    address_line2?: string | null;
    city: string;
    state: string;
    postal_code: string;
    country?: string;
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
    return {
      ok: false,
      kind: 'inactive',
      message: 'Vault is an inactive future feature; no vault operation can be proposed.',
    };
  }
  const fields: FieldError[] = [];
  if (input.confirmed === true)
    fields.push({ path: 'confirmed', message: 'agents may only propose (confirmed false); the owner confirms' });
  if (input.destructive_confirmed === true) {
    fields.push({
      path: 'destructive_confirmed',
      message: 'only the owner can confirm a destructive action (send false)',
    });
  }
  const actionType = input.action_type;
  let destination: Destination | null = null;
  let mailClass: ForwardMailClass | null = null;
  let untrackedAcknowledged = false;

  if (actionType === 'forward_original') {
    if (!input.mail_class)
      fields.push({ path: 'mail_class', message: 'mail_class is required to forward (priority or first_class)' });
    mailClass = input.mail_class ?? null;
    if (mailClass === 'first_class') {
      if (item.kind !== 'letter')
        fields.push({ path: 'mail_class', message: 'first_class forwarding is for letters only' });
      if (input.untracked_acknowledged !== true) {
        fields.push({
          path: 'untracked_acknowledged',
          message: 'first_class is untracked; send untracked_acknowledged true',
        });
      }
      untrackedAcknowledged = input.untracked_acknowledged === true;
    }
    const d = input.destination;
    if (!d) {
      fields.push({ path: 'destination', message: 'destination is required to forward' });
    } else {
      const country = (d.country ?? 'US').trim().toUpperCase();
      if (country !== 'US')
        fields.push({ path: 'destination.country', message: 'forwarding is to US destinations only (country US)' });
      const state = toStateCode(d.state);
      if (!state || !isStateCode(state)) fields.push({ path: 'destination.state', message: 'must be a US state code' });
      const zip = d.postal_code.trim();
      if (!ZIP_PATTERN.test(zip))
        fields.push({ path: 'destination.postal_code', message: 'must be a 5-digit or ZIP+4 code' });
      for (const key of ['name', 'address_line1', 'city'] as const) {
        if (!hasVisibleCharacter(d[key]))
          fields.push({ path: `destination.${key}`, message: VISIBLE_CHARACTER_MESSAGE });
      }
      // The destination prints on a forwarding label: one line each, nothing hidden (decision 0110).
      for (const key of ['name', 'address_line1', 'address_line2', 'city', 'state', 'postal_code'] as const) {
        const problem = hiddenCharacterProblem((d[key] ?? '').trim(), 'single_line');
        if (problem) fields.push({ path: `destination.${key}`, message: problem });
      }
      destination = {
        name: d.name.trim(),
        address_line1: d.address_line1.trim(),
        address_line2: d.address_line2?.trim() || null,
        city: d.city.trim(),
        state: state ?? d.state,
        postal_code: zip,
        country,
      };
    }
  } else {
    if (input.destination)
      fields.push({ path: 'destination', message: `destination applies only to forward_original` });
    if (input.mail_class) fields.push({ path: 'mail_class', message: `mail_class applies only to forward_original` });
  }
  if (fields.length) return { ok: false, kind: 'invalid', fields };

  const reason = unavailableReason(item);
  if (reason) return { ok: false, kind: 'unavailable', message: `${actionType} is not available: ${reason}.` };
  return {
    ok: true,
    proposal: {
      action_type: actionType,
      mail_class: mailClass,
      untracked_acknowledged: untrackedAcknowledged,
      destination,
    },
  };
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

export function handlingCapabilities(
  item: { kind: ItemKind; status: string; weightOz: number | null },
  openOperation: boolean,
): HandlingCapability[] {
  const reason = openOperation ? 'another handling operation on this item is still open' : unavailableReason(item);
  const base = () => ({ available: reason === null, reason });
  const mailClasses: ForwardMailClass[] = item.kind === 'letter' ? ['priority', 'first_class'] : ['priority'];
  return [
    {
      action_type: 'forward_original',
      ...base(),
      mail_classes: mailClasses,
      quote: quoteHandling({
        kind: item.kind,
        actionType: 'forward_original',
        mailClass: 'priority',
        weightOz: item.weightOz,
      }),
      requires_owner_confirmation: true,
      requires_staff_attestation: false,
    },
    {
      action_type: 'open_and_scan',
      ...base(),
      quote: quoteHandling({ kind: item.kind, actionType: 'open_and_scan' }),
      requires_owner_confirmation: true,
      requires_staff_attestation: false,
    },
    {
      action_type: 'discard',
      ...base(),
      quote: quoteHandling({ kind: item.kind, actionType: 'discard' }),
      requires_owner_confirmation: true,
      requires_staff_attestation: true,
    },
    {
      action_type: 'vault',
      available: false,
      reason: 'inactive future feature',
      quote: null,
      requires_owner_confirmation: true,
      requires_staff_attestation: false,
    },
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
export function checkFacilityDecision(
  op: { action_type: HandlingActionType; mail_class: ForwardMailClass | null },
  d: FacilityDecisionInput,
): FieldError[] {
  const fields: FieldError[] = [];
  if (d.decision === 'complete') {
    if (op.action_type === 'open_and_scan') {
      fields.push({
        path: 'decision',
        message:
          'open_and_scan completes when its scan request is fulfilled (POST /v1/facility/scan-requests/{id}/fulfil)',
      });
    }
    if (
      op.action_type === 'forward_original' &&
      op.mail_class === 'priority' &&
      !hasVisibleCharacter(d.tracking_number ?? '')
    ) {
      fields.push({ path: 'tracking_number', message: 'priority forwarding needs the tracking number on completion' });
    }
    if (op.action_type === 'forward_original' && op.mail_class === 'first_class' && d.tracking_number) {
      fields.push({ path: 'tracking_number', message: 'first_class forwarding is untracked; send no tracking number' });
    }
    if (op.action_type === 'discard' && !hasVisibleCharacter(d.attestation ?? '')) {
      fields.push({ path: 'attestation', message: 'discard needs a staff attestation on completion' });
    }
  }
  if (d.decision === 'reject' && !hasVisibleCharacter(d.reason ?? ''))
    fields.push({ path: 'reason', message: 'a reason is required to reject' });
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

// ---------------------------------------------------------------------------------------
// Package custody actions (the /v1/packages surface): requested by an agent or member,
// carried out by the facility.

export const PACKAGE_ACTIONS = [
  'scan',
  'open_and_scan',
  'photograph',
  'record_video',
  'forward',
  'shred',
  'dispose',
  'return_to_sender',
  'hold',
] as const;
export type PackageActionType = (typeof PACKAGE_ACTIONS)[number];
export const PACKAGE_ACTION_STATUSES = [
  'requested',
  'clarification_needed',
  'in_progress',
  'completed',
  'failed',
  'cancelled',
] as const;
export type PackageActionStatus = (typeof PACKAGE_ACTION_STATUSES)[number];
/** Actions in these states can still be changed (PATCH) and progressed by the facility. */
export const ACTIVE_PACKAGE_ACTION_STATUSES: PackageActionStatus[] = [
  'requested',
  'clarification_needed',
  'in_progress',
];
/** Scan actions are carried out by fulfilling their scan request. */
export const SCAN_PACKAGE_ACTIONS: PackageActionType[] = ['scan', 'open_and_scan'];
/** Custody states a package can be forwarded (or otherwise acted on) from. */
export const FORWARDABLE_PACKAGE_STATUSES = HANDLEABLE_ITEM_STATUSES;

/** The package state a new request puts the package in, or null to keep it. */
export function packageStatusOnRequest(action: PackageActionType): string | null {
  return action === 'forward' ? 'forwarding_requested' : null;
}

/**
 * The package state after the facility moves an action, or null to keep it. Failed
 * forwarding or returns go back to the state the package had before the request.
 */
export function packageStatusAfter(
  action: PackageActionType,
  status: PackageActionStatus,
  before: string | null,
): string | null {
  if (status === 'failed') return action === 'forward' || action === 'return_to_sender' ? before : null;
  const table: Partial<Record<PackageActionType, Partial<Record<PackageActionStatus, string>>>> = {
    forward: { in_progress: 'forwarding_shipped', completed: 'forwarded' },
    return_to_sender: { in_progress: 'returning', completed: 'returned' },
    shred: { completed: 'shredded' },
    dispose: { completed: 'disposed' },
    hold: { completed: 'held' },
  };
  return table[action]?.[status] ?? null;
}

export type PackageActionRefusal =
  { kind: 'state'; message: string } | { kind: 'invalid'; fields: FieldError[] } | null;

/** What the facility must send to move an action: shipping a forward needs its tracking number. */
export function checkPackageActionUpdate(
  action: PackageActionType,
  current: PackageActionStatus,
  update: { status: PackageActionStatus; clarification_question?: string | null; tracking_number?: string | null },
): PackageActionRefusal {
  if (!ACTIVE_PACKAGE_ACTION_STATUSES.includes(current))
    return { kind: 'state', message: `The action is ${current} and no longer active.` };
  const fields: FieldError[] = [];
  if (SCAN_PACKAGE_ACTIONS.includes(action) && update.status === 'completed') {
    fields.push({ path: 'status', message: 'scan actions complete when their scan request is fulfilled' });
  }
  if (update.status === 'clarification_needed' && !update.clarification_question?.trim()) {
    fields.push({ path: 'clarification_question', message: 'say what the facility needs to know' });
  }
  if (action === 'forward' && update.status === 'in_progress' && !update.tracking_number?.trim()) {
    fields.push({ path: 'tracking_number', message: 'shipping a forward needs its tracking number' });
  }
  return fields.length ? { kind: 'invalid', fields } : null;
}

/** Custody states in which the facility still holds the package. */
export const IN_CUSTODY_PACKAGE_STATUSES = ['received', 'stored', 'held', 'forwarding_requested'];
/** Actions that take the package out of the shelf: only from a forwardable state. */
const RELEASING_ACTIONS: PackageActionType[] = ['forward', 'shred', 'dispose', 'return_to_sender', 'hold'];

/** Why an action cannot be requested on a package in this state, or null when it can. */
export function packageActionUnavailable(action: PackageActionType, packageStatus: string): string | null {
  const allowed = RELEASING_ACTIONS.includes(action) ? FORWARDABLE_PACKAGE_STATUSES : IN_CUSTODY_PACKAGE_STATUSES;
  return allowed.includes(packageStatus) ? null : `the package is ${packageStatus}`;
}

export interface ForwardAddress {
  to_name: string;
  to_line1: string;
  to_line2: string | null;
  to_city: string;
  to_state: string;
  to_zip: string;
  to_country: string;
}

/**
 * Checks a package forwarding address (given as the forward action's parameters or the
 * /forward body): name, line 1, city, state and ZIP are required; US addresses need a
 * state code and a 5-digit or ZIP+4 code. `prefix` is the field path prefix.
 */
export function checkForwardAddress(
  input: Record<string, unknown>,
  prefix = '',
): { ok: true; address: ForwardAddress } | { ok: false; fields: FieldError[] } {
  const fields: FieldError[] = [];
  const str = (key: string, required: boolean): string | null => {
    const v = input[key];
    if (v === undefined || v === null || (typeof v === 'string' && !hasVisibleCharacter(v))) {
      if (required) fields.push({ path: `${prefix}${key}`, message: `${key} is required` });
      return null;
    }
    if (typeof v !== 'string') {
      fields.push({ path: `${prefix}${key}`, message: 'must be a string' });
      return null;
    }
    // The address prints on a forwarding label: one line each, nothing hidden (decision 0110).
    const problem = hiddenCharacterProblem(v.trim(), 'single_line');
    if (problem) {
      fields.push({ path: `${prefix}${key}`, message: problem });
      return null;
    }
    return v.trim();
  };
  const address = {
    to_name: str('to_name', true),
    to_line1: str('to_line1', true),
    to_line2: str('to_line2', false),
    to_city: str('to_city', true),
    to_state: str('to_state', true),
    to_zip: str('to_zip', true),
    to_country: (str('to_country', false) ?? 'US').toUpperCase(),
  };
  if (address.to_country === 'US') {
    if (address.to_state) {
      const code = toStateCode(address.to_state);
      if (!code) fields.push({ path: `${prefix}to_state`, message: 'must be a US state code' });
      else address.to_state = code;
    }
    if (address.to_zip && !ZIP_PATTERN.test(address.to_zip))
      fields.push({ path: `${prefix}to_zip`, message: 'must be a 5-digit or ZIP+4 code' });
  } else if (!/^[A-Z]{2}$/.test(address.to_country)) {
    fields.push({ path: `${prefix}to_country`, message: 'must be an ISO 3166-1 alpha-2 code' });
  }
  return fields.length ? { ok: false, fields } : { ok: true, address: address as ForwardAddress };
}
