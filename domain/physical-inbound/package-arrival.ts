// What an agent arranges for pieces before they reach its private mailbox, and what
// happens when one does: expected shipments (matched by tracking number, normalised)
// and mailbox rules (literal matches on the sender, the carrier and the kind of piece).
// On arrival the expected shipment's instruction, else the first matching rule's, gives
// at most one action to request, and every matching rule adds its tags. Pure: no I/O.
import { normalizeRuleText } from '../webhooks/rules';
import type { PackageActionType } from '../workflow-safe/handling';

export const EXPECTED_SHIPMENT_STATUSES = ['expected', 'received', 'cancelled'] as const;
export type ExpectedShipmentStatus = (typeof EXPECTED_SHIPMENT_STATUSES)[number];

export const PIECE_KINDS = ['letter', 'parcel'] as const;
export type PieceKind = (typeof PIECE_KINDS)[number];

export const ARRIVAL_LIMITS = {
  /** Open (status expected) shipments per agent. */
  openShipmentsPerAgent: 500,
  rulesPerAgent: 25,
  termsPerList: 20,
  senderTermLength: 200,
  carrierLength: 60,
  tagsPerRule: 10,
  tagLength: 50,
  nameLength: 100,
} as const;

/**
 * Carriers print tracking numbers with spaces and dashes and people type them in any
 * case: "1z 999-aa1 0123456784" and "1Z999AA10123456784" are the same parcel.
 */
export function normaliseTrackingNumber(value: string): string {
  return value
    .normalize('NFKC')
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '');
}

/** Carrier names compare case- and space-insensitively ("UPS", " ups "). */
export function normaliseCarrier(value: string): string {
  return normalizeRuleText(value);
}

/** The action an expected shipment or a rule asks for on arrival (an ActionRequest). */
export interface ArrivalAction {
  action: PackageActionType;
  priority: 'low' | 'normal' | 'high' | 'urgent';
  parameters?: Record<string, unknown>;
}

export interface RuleMatch {
  /** Any of these literal terms in the sender's name (NFKC, lower case, spaces collapsed). */
  sender_contains?: string[];
  /** Any of these carriers, compared whole. */
  carriers?: string[];
  kinds?: PieceKind[];
}

export interface RuleApply {
  request_action?: ArrivalAction;
  add_tags?: string[];
}

export interface MailboxRule {
  id: string;
  name: string;
  enabled: boolean;
  match: RuleMatch;
  apply: RuleApply;
}

export interface ArrivingPiece {
  kind: PieceKind;
  carrier: string | null;
  senderName: string | null;
}

/** Every criterion the rule names must hold; a criterion about a missing label field fails. */
export function ruleMatchesPiece(match: RuleMatch, piece: ArrivingPiece): boolean {
  if (match.kinds?.length && !match.kinds.includes(piece.kind)) return false;
  if (match.carriers?.length) {
    if (!piece.carrier) return false;
    const carrier = normaliseCarrier(piece.carrier);
    if (!match.carriers.some((c) => normaliseCarrier(c) === carrier)) return false;
  }
  if (match.sender_contains?.length) {
    if (!piece.senderName) return false;
    const sender = normalizeRuleText(piece.senderName);
    if (!match.sender_contains.some((t) => sender.includes(normalizeRuleText(t)))) return false;
  }
  return true;
}

/** Why a rule's match names nothing to match on, or null. */
export function emptyMatchProblem(match: RuleMatch): string | null {
  return match.sender_contains?.length || match.carriers?.length || match.kinds?.length
    ? null
    : 'name at least one of sender_contains, carriers or kinds';
}

/** Why a rule's apply does nothing, or null. */
export function emptyApplyProblem(apply: RuleApply): string | null {
  return apply.request_action || apply.add_tags?.length ? null : 'name request_action, add_tags or both';
}

export type ArrivalSource =
  { kind: 'expected_shipment'; id: string } | { kind: 'mailbox_rule'; id: string; name: string };

export interface ArrivalPlan {
  /** At most one action: the expected shipment's, else the first matching rule's that has one. */
  action: (ArrivalAction & { source: ArrivalSource }) | null;
  /** Tags of every matching rule, first occurrence first. */
  tags: Array<{ tag: string; ruleId: string }>;
  matchedRuleIds: string[];
}

/** `rules` in the agent's order (oldest first); disabled rules never match. */
export function planArrival(
  piece: ArrivingPiece,
  shipment: { id: string; on_arrival: ArrivalAction | null } | null,
  rules: MailboxRule[],
): ArrivalPlan {
  const matched = rules.filter((r) => r.enabled && ruleMatchesPiece(r.match, piece));
  let action: ArrivalPlan['action'] = shipment?.on_arrival
    ? { ...shipment.on_arrival, source: { kind: 'expected_shipment', id: shipment.id } }
    : null;
  if (!action) {
    const first = matched.find((r) => r.apply.request_action);
    if (first)
      action = { ...first.apply.request_action!, source: { kind: 'mailbox_rule', id: first.id, name: first.name } };
  }
  const seen = new Set<string>();
  const tags: ArrivalPlan['tags'] = [];
  for (const rule of matched) {
    for (const tag of rule.apply.add_tags ?? []) {
      if (seen.has(tag)) continue;
      seen.add(tag);
      tags.push({ tag, ruleId: rule.id });
    }
  }
  return { action, tags, matchedRuleIds: matched.map((r) => r.id) };
}
