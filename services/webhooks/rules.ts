// Rule matching for custom webhook endpoints: evaluates the saved literal rules of a
// member's active endpoints against an inbound item's saved OCR and publishes
// inbound.rule_matched once per (item, rule), delivered only to the endpoint that owns
// the rule. Called by the inbound pipeline from an activity once OCR is saved.
import type { Deps } from '../shared/deps';
import { publishEvent } from './events';
import { evaluateRule, RulePage, WebhookRule } from '../../domain/webhooks/rules';
import { endpointEnvironmentOf, RULE_MATCHED_EVENT_TYPE } from '../../domain/webhooks/events';
import { sqlRows } from '../shared/sql';

export interface RuleMatchInput {
  memberId: string;
  agentId: string | null;
  itemId: string;
  environment: 'live' | 'test';
  sourceDomain: string;
  pages: RulePage[];
}

interface RuleRow extends WebhookRule {
  endpoint_id: string;
}

/** Returns the ids of the inbound.rule_matched events for every rule that matched. */
export async function emitRuleMatches(deps: Deps, input: RuleMatchInput): Promise<string[]> {
  const rules = await sqlRows<RuleRow>(
    deps.db,
    `SELECT r.id, r.name, r.source, r.match, r.terms, r.exclude_terms, r.endpoint_id
       FROM webhook_endpoint_rules r JOIN webhook_endpoints e ON e.id = r.endpoint_id
      WHERE e.member_id = $1 AND e.status = 'active' AND e.environment = $2
        AND (e.agent_id IS NULL OR e.agent_id = $3)
      ORDER BY r.created_at, r.id`,
    [input.memberId, endpointEnvironmentOf(input.environment), input.agentId],
  );
  const eventIds: string[] = [];
  for (const rule of rules) {
    if (evaluateRule(rule, input.pages) !== 'matched') continue;
    const published = await publishEvent(deps, {
      eventKey: `inbound.rule_matched:${input.itemId}:${rule.id}`,
      memberId: input.memberId,
      agentId: input.agentId,
      eventType: RULE_MATCHED_EVENT_TYPE,
      testMode: input.environment === 'test',
      objectType: 'inbound_item',
      objectId: input.itemId,
      // Identifiers only: no document text, no retrieval URL. A match needs every
      // selected page's OCR ready, so the item's OCR is ready as far as the rule is concerned.
      payload: {
        item_id: input.itemId,
        agent_id: input.agentId,
        source_domain: input.sourceDomain,
        ocr_status: 'ready',
        rule_id: rule.id,
        rule_name: rule.name,
        endpoint_id: rule.endpoint_id,
      },
    });
    eventIds.push(published.id);
  }
  return eventIds;
}
