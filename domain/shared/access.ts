// Who may call each endpoint: the one table of key kinds, scopes and guards. Every route
// the API mounts must have a row here (the router refuses to start otherwise), and the
// scope table in docs/agents.md is generated from it. Member keys carry every scope; the scopes
// below apply to agent credentials.
import type { KeyKind } from '../accounts/keys';

export const SCOPES = [
  'mailbox.read',
  'mailbox.write',
  'package.read',
  'package.write',
  'forward.create',
  'scan.create',
  'mail.send',
  'inbound.read',
  'billing.read',
  'webhook.manage',
  'webhook.read',
  'agent.read',
  'agent.write',
  'message.send',
  // named elsewhere in the spec
  'agent.inbox.read',
  'agent.inbox.report',
  'agent.inbox.propose',
  'inbound.item.read',
  'inbound.item.scan.read',
] as const;
export type Scope = (typeof SCOPES)[number];

export interface Access {
  /** Key kinds allowed; 'public' needs no key. */
  callers: 'public' | KeyKind[];
  /** Agent keys need every one of these. */
  scopes?: Scope[];
  /** Agent keys need at least one of these. */
  anyScope?: Scope[];
  /** Test keys get 403 live_key_required. */
  liveOnly?: boolean;
  /** Test keys get 403 sandbox_not_supported (physical inbound custody). */
  sandboxUnsupported?: boolean;
  /** Only test keys (sandbox helpers). */
  testOnly?: boolean;
  /** Agent keys must send X-Service-MD-Version equal to the current instructions version. */
  versionGuard?: boolean;
  /**
   * Public routes count requests per client IP: 'signup' against the signup budget
   * (5/minute), 'public' against the standard per-minute rate.
   */
  ipRateLimit?: 'signup' | 'public';
}

const MEMBER: KeyKind[] = ['member', 'member_test'];
const AGENT: KeyKind[] = ['agent', 'agent_test'];
const KEYS: KeyKind[] = [...MEMBER, ...AGENT];
const FACILITY: KeyKind[] = ['facility'];

export const ENDPOINT_ACCESS: Record<string, Access> = {
  // Public
  'POST /v1/signup': { callers: 'public', ipRateLimit: 'signup' },
  'POST /v1/waitlist': { callers: 'public', ipRateLimit: 'public' },
  'GET /v1/leads/:leadId': { callers: 'public', ipRateLimit: 'public' },
  'GET /v1': { callers: 'public', ipRateLimit: 'public' },

  // Agents, keys, instructions
  'GET /v1/agents': { callers: KEYS, scopes: ['agent.read'] },
  'POST /v1/agents': { callers: MEMBER },
  'GET /v1/agents/:id': { callers: KEYS, scopes: ['agent.read'] },
  'PATCH /v1/agents/:id': { callers: KEYS, scopes: ['agent.write'], liveOnly: true, versionGuard: true },
  'DELETE /v1/agents/:id': { callers: MEMBER, liveOnly: true },
  'GET /v1/agents/:id/credentials': { callers: MEMBER },
  'POST /v1/agents/:id/credentials': { callers: MEMBER },
  'DELETE /v1/agents/:id/credentials/:credentialId': { callers: MEMBER },
  'GET /v1/agents/:id/instructions': { callers: KEYS },
  'PUT /v1/agents/:id/instructions': { callers: MEMBER },
  'GET /v1/agents/:id/instructions/versions': { callers: KEYS },
  'POST /v1/agents/:id/instructions/proposals': { callers: AGENT, scopes: ['agent.write'], versionGuard: true },
  'GET /v1/agents/:id/instructions/proposals': { callers: KEYS },
  'POST /v1/agents/:id/instructions/proposals/:proposalId/decision': { callers: MEMBER },
  'GET /v1/api-keys': { callers: MEMBER },
  'POST /v1/api-keys': { callers: MEMBER },
  'POST /v1/api-keys/:id/rotate': { callers: MEMBER, liveOnly: true },
  'DELETE /v1/api-keys/:id': { callers: MEMBER },
  'GET /v1/mailboxes': { callers: KEYS, anyScope: ['mailbox.read', 'mail.send'] },

  // Outbound mail
  'POST /v1/mail': { callers: KEYS, scopes: ['mail.send'], versionGuard: true },
  'GET /v1/mail': { callers: KEYS, scopes: ['mail.send'] },
  'GET /v1/mail/:id': { callers: KEYS, scopes: ['mail.send'] },
  'GET /v1/mail/:id/document': { callers: KEYS, scopes: ['mail.send'] },
  // The signed link is the credential (a dry run's proof_url).
  'GET /v1/mail/dry-run-proofs/:token': { callers: 'public' },
  'DELETE /v1/mail/:id': { callers: KEYS, scopes: ['mail.send'], versionGuard: true },
  'POST /v1/mail/:id/approve': { callers: MEMBER },
  'POST /v1/mail/:id/reject': { callers: MEMBER },
  'POST /v1/test/mail': {
    callers: ['member_test', 'agent_test'],
    scopes: ['mail.send'],
    testOnly: true,
    versionGuard: true,
  },
  'POST /v1/test/mail/:id/advance': { callers: ['member_test', 'agent_test'], scopes: ['mail.send'], testOnly: true },
  'POST /v1/test/webhook': { callers: KEYS, anyScope: ['webhook.manage', 'mail.send'] },
  'GET /v1/credits': { callers: KEYS, anyScope: ['billing.read', 'mail.send'] },
  'GET /v1/usage': { callers: KEYS, anyScope: ['billing.read', 'mail.send'] },

  // Facility fulfillment of outbound mail
  'GET /v1/facility/mail': { callers: FACILITY },
  'GET /v1/facility/mail/:id': { callers: FACILITY },
  'GET /v1/facility/mail/:id/document': { callers: FACILITY },
  'POST /v1/facility/mail/:id/printing': { callers: FACILITY },
  'POST /v1/facility/mail/:id/printed': { callers: FACILITY },
  'POST /v1/facility/mail/:id/dispatched': { callers: FACILITY },
  'POST /v1/facility/mail/:id/delivered': { callers: FACILITY },
  'POST /v1/facility/mail/:id/failed': { callers: FACILITY },
  'POST /v1/facility/mail/:id/carrier-delivery-failed': { callers: FACILITY },

  // Legacy agent webhooks
  'PUT /v1/webhooks/settings': { callers: KEYS, scopes: ['webhook.manage'], liveOnly: true, versionGuard: true },
  'GET /v1/webhooks/events': { callers: KEYS, scopes: ['webhook.read'], liveOnly: true },
  'GET /v1/webhooks/events/:eventId': { callers: KEYS, scopes: ['webhook.read'], liveOnly: true },

  // Merge templates: the member's; member keys manage them, agent keys with mail.send read, preview and send them.
  'POST /v1/templates': { callers: MEMBER },
  'GET /v1/templates': { callers: KEYS, scopes: ['mail.send'] },
  'GET /v1/templates/:id': { callers: KEYS, scopes: ['mail.send'] },
  'PATCH /v1/templates/:id': { callers: MEMBER },
  'DELETE /v1/templates/:id': { callers: MEMBER },
  'POST /v1/templates/:id/preview': { callers: KEYS, scopes: ['mail.send'] },

  // Business mail runs: live agent keys act; test keys get 403 live_key_required; the owner's member key may read.
  'POST /v1/mail-runs': { callers: AGENT, scopes: ['mail.send'], liveOnly: true, versionGuard: true },
  'GET /v1/mail-runs/:id': { callers: KEYS, scopes: ['mail.send'], liveOnly: true },
  'POST /v1/mail-runs/:id/commit': { callers: AGENT, scopes: ['mail.send'], liveOnly: true, versionGuard: true },
  'DELETE /v1/mail-runs/:id': { callers: AGENT, scopes: ['mail.send'], liveOnly: true, versionGuard: true },

  // Batch mail
  'POST /v1/batch-mail/estimate': { callers: KEYS, scopes: ['mail.send'] },
  'POST /v1/batch-mail': { callers: KEYS, scopes: ['mail.send'], versionGuard: true },
  'GET /v1/batch-mail': { callers: KEYS, scopes: ['mail.send'] },
  'GET /v1/batch-mail/:id': { callers: KEYS, scopes: ['mail.send'] },
  'DELETE /v1/batch-mail/:id': { callers: KEYS, scopes: ['mail.send'], versionGuard: true },
  'POST /v1/batch-mail/:id/confirm': { callers: KEYS, scopes: ['mail.send'], versionGuard: true },
  'POST /v1/batch-mail/:id/advance': { callers: ['member_test', 'agent_test'], scopes: ['mail.send'], testOnly: true },

  // Batch mail fulfilment (facility keys)
  'GET /v1/facility/batches': { callers: FACILITY },
  'GET /v1/facility/batches/:id': { callers: FACILITY },
  'GET /v1/facility/batches/:id/pieces/:sequence/document': { callers: FACILITY },
  'POST /v1/facility/batches/:id/start': { callers: FACILITY },
  'POST /v1/facility/batches/:id/pieces': { callers: FACILITY },
  'POST /v1/facility/batches/:id/finish': { callers: FACILITY },
  'POST /v1/facility/batches/:id/fail': { callers: FACILITY },

  // Packages (physical inbound custody: live only)
  'GET /v1/packages': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'GET /v1/packages/:id': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'GET /v1/packages/:id/photos': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'GET /v1/packages/:id/actions': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'POST /v1/packages/:id/actions': {
    callers: KEYS,
    anyScope: ['package.write', 'forward.create'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'GET /v1/packages/:id/actions/:actionId': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'PATCH /v1/packages/:id/actions/:actionId': {
    callers: KEYS,
    scopes: ['package.write'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'GET /v1/packages/:id/forward': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'POST /v1/packages/:id/forward': {
    callers: KEYS,
    scopes: ['forward.create'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'GET /v1/packages/:id/scan': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'POST /v1/packages/:id/scan': {
    callers: KEYS,
    scopes: ['scan.create'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'GET /v1/packages/:id/tags': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'POST /v1/packages/:id/tags': {
    callers: KEYS,
    scopes: ['package.write'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'DELETE /v1/packages/:id/tags': {
    callers: KEYS,
    scopes: ['package.write'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'GET /v1/packages/:id/notes': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'POST /v1/packages/:id/notes': {
    callers: KEYS,
    scopes: ['package.write'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  // Agent-specific arrangements for arriving pieces (member keys pass ?agent_id=): the packages' scopes.
  'GET /v1/expected-shipments': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'POST /v1/expected-shipments': {
    callers: KEYS,
    scopes: ['package.write'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'GET /v1/expected-shipments/:id': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'PATCH /v1/expected-shipments/:id': {
    callers: KEYS,
    scopes: ['package.write'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'DELETE /v1/expected-shipments/:id': {
    callers: KEYS,
    scopes: ['package.write'],
    sandboxUnsupported: true,
    versionGuard: true,
  },
  'GET /v1/rules': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'POST /v1/rules': { callers: KEYS, scopes: ['package.write'], sandboxUnsupported: true, versionGuard: true },
  'GET /v1/rules/:id': { callers: KEYS, scopes: ['package.read'], sandboxUnsupported: true },
  'PATCH /v1/rules/:id': { callers: KEYS, scopes: ['package.write'], sandboxUnsupported: true, versionGuard: true },
  'DELETE /v1/rules/:id': { callers: KEYS, scopes: ['package.write'], sandboxUnsupported: true, versionGuard: true },

  // Managed mailbox items
  'GET /v1/inbound-items': { callers: KEYS, scopes: ['inbound.item.read'] },
  'GET /v1/inbound-items/:id': { callers: KEYS, scopes: ['inbound.item.read'] },
  // An agent's Open & Scan request is a proposal for its owner, like agent-inbox handling.
  'POST /v1/inbound-items/:id/actions': {
    callers: KEYS,
    scopes: ['inbound.item.read', 'agent.inbox.propose'],
    versionGuard: true,
  },
  'GET /v1/inbound-items/:id/forward-quote': { callers: KEYS, scopes: ['inbound.item.read'] },
  'GET /v1/inbound-items/:id/scans': { callers: KEYS, scopes: ['inbound.item.read', 'inbound.item.scan.read'] },
  'GET /v1/inbound-items/:id/pages': { callers: KEYS, scopes: ['inbound.item.read', 'inbound.item.scan.read'] },
  'POST /v1/inbound-items/:id/reset-sample': {
    callers: ['member_test', 'agent_test'],
    scopes: ['inbound.item.read'],
    testOnly: true,
  },
  'GET /v1/inbound-activity': { callers: KEYS, scopes: ['inbound.item.read'] },
  // The owner's decisions on handling operations
  'GET /v1/handling': { callers: MEMBER },
  'GET /v1/handling/:id': { callers: MEMBER },
  'POST /v1/handling/:id/approve': { callers: MEMBER },
  'POST /v1/handling/:id/reject': { callers: MEMBER },

  // Assigned inbound (agent inbox): agent-scoped keys only
  'GET /v1/agent-inbox': { callers: AGENT, scopes: ['agent.inbox.read'] },
  'GET /v1/agent-inbox/activity': { callers: AGENT, scopes: ['agent.inbox.read'] },
  'POST /v1/agent-inbox/sandbox/seed': { callers: ['agent_test'], scopes: ['agent.inbox.read'], testOnly: true },
  'GET /v1/agent-inbox/:id/context': { callers: AGENT, scopes: ['agent.inbox.read', 'agent.read'] },
  'GET /v1/agent-inbox/:id/sources': { callers: AGENT, scopes: ['agent.inbox.read', 'agent.read'] },
  // Scan history: test keys on the member sample only.
  'GET /v1/agent-inbox/:id/scans': { callers: ['agent_test'], scopes: ['agent.inbox.read'], testOnly: true },
  'GET /v1/agent-inbox/:id/scans/:operationId': {
    callers: ['agent_test'],
    scopes: ['agent.inbox.read'],
    testOnly: true,
  },
  'POST /v1/agent-inbox/:id/acknowledgments': { callers: AGENT, scopes: ['agent.inbox.report'] },
  'GET /v1/agent-inbox/:id/handling': { callers: AGENT, scopes: ['agent.read', 'agent.inbox.read'] },
  'POST /v1/agent-inbox/:id/handling': {
    callers: AGENT,
    scopes: ['agent.read', 'agent.inbox.read', 'agent.inbox.propose'],
    versionGuard: true,
  },

  // Facility side of physical inbound (intake, scans, package actions, handling decisions)
  'POST /v1/facility/mailboxes/identify': { callers: FACILITY },
  'GET /v1/facility/inbound/drafts': { callers: FACILITY },
  'POST /v1/facility/inbound/drafts': { callers: FACILITY },
  'GET /v1/facility/inbound/drafts/:id': { callers: FACILITY },
  'PUT /v1/facility/inbound/drafts/:id': { callers: FACILITY },
  'POST /v1/facility/inbound/drafts/:id/exterior': { callers: FACILITY },
  'POST /v1/facility/inbound/drafts/:id/match': { callers: FACILITY },
  'POST /v1/facility/inbound/drafts/:id/commit': { callers: FACILITY },
  'GET /v1/facility/scan-requests': { callers: FACILITY },
  'POST /v1/facility/scan-requests/:id/fulfil': { callers: FACILITY },
  'POST /v1/facility/scan-requests/:id/reject': { callers: FACILITY },
  'GET /v1/facility/package-actions': { callers: FACILITY },
  'POST /v1/facility/package-actions/:id/status': { callers: FACILITY },
  'GET /v1/facility/internal-inbound/handling': { callers: FACILITY },
  'POST /v1/facility/internal-inbound/handling/:id/decision': { callers: FACILITY },

  // Forwarded inbound context
  'GET /v1/inbound-forwarding-addresses': { callers: KEYS, scopes: ['inbound.read'] },
  'GET /v1/inbound-forwarding-addresses/:id': { callers: KEYS, scopes: ['inbound.read'] },
  // Managing intake aliases and threads writes mailbox settings: mailbox.write.
  'POST /v1/inbound-forwarding-addresses': { callers: KEYS, scopes: ['mailbox.write'], versionGuard: true },
  'PATCH /v1/inbound-forwarding-addresses/:id': { callers: KEYS, scopes: ['mailbox.write'], versionGuard: true },
  'GET /v1/inbound': { callers: KEYS, scopes: ['inbound.read'] },
  'GET /v1/inbound/:id': { callers: KEYS, scopes: ['inbound.read'] },
  'GET /v1/inbound/:id/files/:fileId': { callers: KEYS, scopes: ['inbound.read'] },
  'GET /v1/postal-threads': { callers: KEYS, scopes: ['inbound.read'] },
  'GET /v1/postal-threads/:id': { callers: KEYS, scopes: ['inbound.read'] },
  'PATCH /v1/postal-threads/:id': { callers: KEYS, scopes: ['mailbox.write'], versionGuard: true },
  // An email provider's inbound webhook: no API key; the service checks the shared intake secret.
  'POST /v1/intake/email': { callers: 'public' },

  // Support tickets and facility messages (message.send covers writing and reading them)
  'POST /v1/support/messages': { callers: KEYS, scopes: ['message.send'], versionGuard: true },
  'GET /v1/support/conversations': { callers: KEYS, scopes: ['message.send'] },
  'GET /v1/support/conversations/:id/messages': { callers: KEYS, scopes: ['message.send'] },
  'POST /v1/support/conversations/:id/messages': { callers: KEYS, scopes: ['message.send'], versionGuard: true },
  'POST /v1/support/conversations/:id/resolve': { callers: KEYS, scopes: ['message.send'], versionGuard: true },
  'POST /v1/facility-messages': { callers: KEYS, scopes: ['message.send'], versionGuard: true },
  'GET /v1/facility-messages/conversations': { callers: KEYS, scopes: ['message.send'] },
  'GET /v1/facility-messages/conversations/:id/messages': { callers: KEYS, scopes: ['message.send'] },
  'GET /v1/facility/conversations': { callers: FACILITY },
  'GET /v1/facility/conversations/:id/messages': { callers: FACILITY },
  'POST /v1/facility/conversations/:id/messages': { callers: FACILITY },

  // Custom webhook endpoints
  'GET /v1/webhook-endpoints': { callers: KEYS, scopes: ['webhook.read'] },
  'POST /v1/webhook-endpoints': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'GET /v1/webhook-endpoints/:id': { callers: KEYS, scopes: ['webhook.read'] },
  'PATCH /v1/webhook-endpoints/:id': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'DELETE /v1/webhook-endpoints/:id': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'POST /v1/webhook-endpoints/:id/verify': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'POST /v1/webhook-endpoints/:id/test': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'POST /v1/webhook-endpoints/:id/test-sample': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'POST /v1/webhook-endpoints/:id/rotate-secret': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'GET /v1/webhook-endpoints/:id/deliveries': { callers: KEYS, scopes: ['webhook.read'] },
  'GET /v1/webhook-endpoints/:id/rules': { callers: KEYS, scopes: ['webhook.read'] },
  'POST /v1/webhook-endpoints/:id/rules': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'PATCH /v1/webhook-endpoints/:id/rules/:ruleId': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'DELETE /v1/webhook-endpoints/:id/rules/:ruleId': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },
  'GET /v1/webhook-deliveries/:id': { callers: KEYS, scopes: ['webhook.read'] },
  'POST /v1/webhook-deliveries/:id/replay': { callers: KEYS, scopes: ['webhook.manage'], versionGuard: true },

  // The owner's email notification settings (the console's Notifications page)
  'GET /v1/notifications/settings': { callers: MEMBER, liveOnly: true },
  'PATCH /v1/notifications/settings': { callers: MEMBER, liveOnly: true },
  'POST /v1/notifications/recipients': { callers: MEMBER, liveOnly: true },
  'PATCH /v1/notifications/recipients/:id': { callers: MEMBER, liveOnly: true },
  'DELETE /v1/notifications/recipients/:id': { callers: MEMBER, liveOnly: true },

  // Health probes (not under /v1; listed so the table is complete)
  'GET /healthz': { callers: 'public' },
  'GET /livez': { callers: 'public' },
  'GET /readyz': { callers: 'public' },
};

export function accessKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path}`;
}
