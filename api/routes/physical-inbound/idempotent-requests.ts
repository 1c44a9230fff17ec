// Idempotency-Key records of the physical inbound requests that create something: an
// agent-inbox acknowledgment or sandbox seed, a handling proposal, an Open & Scan
// request, a package action, forward or scan, an expected shipment. The REST route and
// its MCP tool both run the request through here, so a retry through either answers the
// first answer (a 201) and creates nothing twice. The operation names and fingerprints are
// the ones stored records were written under: changing one would make a retry of a stored
// key run again, or be refused as another request.
import type { AuthContext } from '../../../services/accounts/auth';
import type { Deps } from '../../../services/shared/deps';
import {
  IdempotentResult,
  requestFingerprint,
  requireIdempotencyKey,
  runIdempotent,
} from '../../../services/shared/idempotency';
import {
  acknowledgeAgentInboxItem,
  AcknowledgmentBody,
  SEED_SCENARIOS,
  seedAgentInboxSandbox,
} from '../../../services/physical-inbound/agent-inbox';
import { InboundActionBody, proposeHandling, requestInboundAction } from '../../../services/physical-inbound/handling';
import {
  ActionRequestBody,
  createPackageAction,
  createPackageForward,
  createPackageScan,
  ForwardBody,
} from '../../../services/physical-inbound/package-actions';
import { createExpectedShipment, ShipmentFields } from '../../../services/physical-inbound/expected-shipments';
import type { ProposalInput } from '../../../domain/workflow-safe/handling';

/** Runs `create` once per (caller, operation, key); without a key (where it is optional) it just runs. */
async function createdOnce(
  deps: Deps,
  auth: AuthContext,
  operation: string,
  key: string | undefined,
  request: unknown,
  create: () => Promise<unknown>,
): Promise<IdempotentResult> {
  return runIdempotent(deps, auth, { operation, key, fingerprint: requestFingerprint(request) }, async () => ({
    status: 201,
    body: await create(),
  }));
}

// Idempotency-Key required.

export function acknowledgeOnce(
  deps: Deps,
  auth: AuthContext,
  itemId: string,
  body: AcknowledgmentBody,
  key: string | undefined,
) {
  return createdOnce(deps, auth, `agent-inbox.ack:${itemId}`, requireIdempotencyKey(key), body, () =>
    acknowledgeAgentInboxItem(deps, auth, itemId, body),
  );
}

export function seedSandboxOnce(
  deps: Deps,
  auth: AuthContext,
  body: { scenario: (typeof SEED_SCENARIOS)[number] },
  key: string | undefined,
) {
  return createdOnce(deps, auth, 'agent-inbox.seed', requireIdempotencyKey(key), body, () =>
    seedAgentInboxSandbox(deps, auth, body),
  );
}

export function proposeHandlingOnce(
  deps: Deps,
  auth: AuthContext,
  itemId: string,
  body: ProposalInput,
  key: string | undefined,
) {
  return createdOnce(deps, auth, `agent-inbox.handling:${itemId}`, requireIdempotencyKey(key), body, () =>
    proposeHandling(deps, auth, itemId, body),
  );
}

export function requestInboundActionOnce(
  deps: Deps,
  auth: AuthContext,
  itemId: string,
  body: InboundActionBody,
  key: string | undefined,
) {
  return createdOnce(deps, auth, `inbound-items.actions:${itemId}`, requireIdempotencyKey(key), body, () =>
    requestInboundAction(deps, auth, itemId, body),
  );
}

// Idempotency-Key optional: a retried forward or scan request replays the first answer
// instead of asking the facility twice.

export function requestPackageActionOnce(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: ActionRequestBody,
  key: string | undefined,
) {
  return createdOnce(deps, auth, `packages.actions:${id}`, key, body, () => createPackageAction(deps, auth, id, body));
}

export function requestPackageForwardOnce(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: ForwardBody,
  key: string | undefined,
) {
  return createdOnce(deps, auth, `packages.forward:${id}`, key, body, () => createPackageForward(deps, auth, id, body));
}

export function requestPackageScanOnce(
  deps: Deps,
  auth: AuthContext,
  id: string,
  body: { scan_type?: string; options?: Record<string, unknown> },
  key: string | undefined,
) {
  return createdOnce(deps, auth, `packages.scan:${id}`, key, body, () => createPackageScan(deps, auth, id, body));
}

export function createExpectedShipmentOnce(
  deps: Deps,
  auth: AuthContext,
  agentIdQuery: string | undefined,
  body: ShipmentFields & { tracking_number: string },
  key: string | undefined,
) {
  return createdOnce(deps, auth, 'expected-shipments.create', key, { agentIdQuery, body }, () =>
    createExpectedShipment(deps, auth, agentIdQuery, body),
  );
}
