// What happens, inside the facility's commit, when a piece enters custody: the open
// expected shipment with its tracking number (same mailbox and agent) is linked and
// marked received, the agent's mailbox rules are matched against the label, their tags
// are added, and at most one action is requested (the shipment's on_arrival, else the
// first matching rule's), as if the agent (or member) that set it up had asked.
import type { EntityManager } from 'typeorm';
import { checkForwardAddress } from '../../domain/workflow-safe/handling';
import { planArrival } from '../../domain/physical-inbound/package-arrival';
import { receiveExpectedShipment, setArrivalAction } from './expected-shipments';
import { countRuleMatches, rulesOfAgent } from './mailbox-rules';
import { insertAction } from './package-actions';
import { ItemRow, recordActivity } from './item-records';
import { addPackageTagRow } from './package-rows';

export interface ArrivalOutcome {
  expected_shipment_id: string | null;
  matched_rule_ids: string[];
  tags: string[];
  action_id: string | null;
}

export async function applyArrival(tx: EntityManager, item: ItemRow): Promise<ArrivalOutcome> {
  const shipment = await receiveExpectedShipment(tx, item);
  const rules = item.agent_id ? await rulesOfAgent(tx, item.member_id, item.agent_id) : [];
  const plan = planArrival({ kind: item.kind, carrier: item.carrier, senderName: item.sender_name }, shipment, rules);

  if (shipment) await recordActivity(tx, item, 'expected_shipment_received', { expected_shipment_id: shipment.id });
  if (plan.matchedRuleIds.length) {
    await countRuleMatches(tx, plan.matchedRuleIds);
    await recordActivity(tx, item, 'mailbox_rules_matched', { rule_ids: plan.matchedRuleIds });
  }
  for (const { tag, ruleId } of plan.tags) {
    const added = await addPackageTagRow(tx, item.id, tag);
    if (added.length) await recordActivity(tx, item, 'tag_added', { tag, rule_id: ruleId });
  }

  let actionId: string | null = null;
  if (plan.action) {
    const { source, ...request } = plan.action;
    const by =
      source.kind === 'expected_shipment' ? shipment!.created_by : rules.find((r) => r.id === source.id)!.created_by;
    // A stored forward was checked when it was saved; the facility's commit never fails on it.
    const checked = request.action === 'forward' ? checkForwardAddress(request.parameters ?? {}) : null;
    if (checked && !checked.ok) {
      await recordActivity(tx, item, 'arrival_action_skipped', {
        source: source.kind,
        id: source.id,
        fields: checked.fields,
      });
    } else {
      const action = await insertAction(
        tx,
        {
          by,
          agentId: item.agent_id,
          agentNotes:
            source.kind === 'expected_shipment'
              ? `Requested on arrival by expected shipment ${source.id}.`
              : `Requested on arrival by mailbox rule "${source.name}" (${source.id}).`,
          agentData: { requested_on_arrival: { source: source.kind, id: source.id } },
        },
        item,
        request,
        checked?.ok ? checked.address : null,
      );
      actionId = action.id as string;
      if (source.kind === 'expected_shipment') await setArrivalAction(tx, source.id, actionId);
    }
  }
  return {
    expected_shipment_id: shipment?.id ?? null,
    matched_rule_ids: plan.matchedRuleIds,
    tags: plan.tags.map((t) => t.tag),
    action_id: actionId,
  };
}
