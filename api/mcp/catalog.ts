// The MCP server's names and versions and the catalog of its tools (name, group, successor of a
// deprecated tool): data only, so that tool declarations (tool.ts) can name the tools without
// importing the registry that collects them (tools/index.ts).

export interface CatalogEntry {
  group: string;
  deprecated?: { successor: string };
}

export const MCP_SERVER_NAME = 'postal-mail-api';
export const MCP_SERVER_VERSION = '1.0.1';
export const MCP_PROTOCOL_VERSION = '2025-11-25';
/**
 * The MCP revisions this server speaks, newest first. The SDK's own list also names
 * 2024-10-07, a draft that never became a revision, so the server negotiates from this one.
 */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = [
  MCP_PROTOCOL_VERSION,
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
];

export const MCP_TOOL_GROUPS = {
  assigned_inbound:
    'Assigned inbound (agent inbox): mail explicitly assigned to the agent, OCR text, duties, outcomes, handling proposals',
  forwarded_context: 'Forwarded inbound context: emailed scans and notices, their extraction and postal threads',
  instructions: "The agent's versioned instructions document (service.md)",
  outbound: 'Outbound postal mail: send, list, read, cancel, sandbox pieces',
  account: 'Account: mailbox, usage, facility messages, agent webhook settings',
  custom_webhooks: 'Custom webhook endpoints: rules, tests, secrets, deliveries',
  managed_mailbox: 'Managed mailbox: physical inbound items, pages, quotes and actions',
} as const;
export type McpToolGroup = keyof typeof MCP_TOOL_GROUPS;

const g = (group: McpToolGroup, successor?: string): CatalogEntry =>
  successor ? { group, deprecated: { successor } } : { group };

export const MCP_TOOL_CATALOG = {
  // assigned inbound
  list_agent_inbox: g('assigned_inbound', 'search_inbound_items'),
  get_agent_inbox_context: g('assigned_inbound', 'get_inbound_item'),
  get_agent_inbox_sources: g('assigned_inbound', 'get_inbound_pages'),
  list_agent_inbox_scans: g('assigned_inbound', 'get_inbound_pages'),
  get_agent_inbox_scan: g('assigned_inbound', 'get_inbound_pages'),
  get_agent_inbox_activity: g('assigned_inbound', 'get_inbound_activity'),
  report_agent_inbox_outcome: g('assigned_inbound'),
  get_agent_inbox_handling: g('assigned_inbound'),
  propose_agent_inbox_handling: g('assigned_inbound'),
  seed_agent_inbox_sandbox: g('assigned_inbound'),
  // forwarded context
  list_inbound_forwarding_addresses: g('forwarded_context'),
  list_inbound_mail: g('forwarded_context'),
  get_inbound_mail: g('forwarded_context'),
  list_postal_threads: g('forwarded_context'),
  get_postal_thread: g('forwarded_context'),
  // instructions
  get_service_md: g('instructions'),
  propose_service_md_edit: g('instructions'),
  // outbound
  send_outbound_mail: g('outbound'),
  list_outbound_mail: g('outbound'),
  get_outbound_mail: g('outbound'),
  cancel_outbound_mail: g('outbound'),
  create_test_outbound_mail: g('outbound'),
  advance_test_outbound_mail: g('outbound'),
  // account
  get_mailbox: g('account'),
  get_usage: g('account'),
  send_facility_message: g('account'),
  list_facility_conversations: g('account'),
  get_facility_messages: g('account'),
  update_webhook: g('account'),
  // custom webhooks
  list_webhook_endpoints: g('custom_webhooks'),
  create_webhook_endpoint: g('custom_webhooks'),
  update_webhook_endpoint: g('custom_webhooks'),
  test_webhook_endpoint: g('custom_webhooks'),
  test_webhook_endpoint_with_sample: g('custom_webhooks'),
  rotate_webhook_endpoint_secret: g('custom_webhooks'),
  list_webhook_deliveries: g('custom_webhooks'),
  replay_webhook_delivery: g('custom_webhooks'),
  // managed mailbox
  list_inbound_items: g('managed_mailbox', 'search_inbound_items'),
  get_inbound_item_sources: g('managed_mailbox', 'get_inbound_pages'),
  search_inbound_items: g('managed_mailbox'),
  get_inbound_item: g('managed_mailbox'),
  get_inbound_pages: g('managed_mailbox'),
  quote_inbound_forward: g('managed_mailbox'),
  request_inbound_action: g('managed_mailbox'),
  get_inbound_activity: g('managed_mailbox'),
} satisfies Record<string, CatalogEntry>;

export type McpToolName = keyof typeof MCP_TOOL_CATALOG;
export const MCP_TOOL_NAMES = Object.keys(MCP_TOOL_CATALOG) as McpToolName[];
