// The MCP tool registry, with the catalog (../catalog.ts, every one of the 45 tools of the
// contract with its group and the successor of a deprecated tool) re-exported.
// `registeredTools` are the tools this server serves (all of them): each is declared in its
// group's file and calls the same service function as the equivalent REST route.
import { MCP_TOOL_CATALOG } from '../catalog';
import { buildRegistry, RegisteredTool } from '../registry';
import { accountTools } from './account';
import { inboundContextTools } from './inbound-context';
import { instructionsTools } from './instructions';
import { outboundTools } from './outbound';
import { agentInboxTools, managedMailboxTools } from './physical-inbound';
import { webhookTools } from './webhooks';

export * from '../catalog';

export const registeredTools: RegisteredTool[] = buildRegistry(MCP_TOOL_CATALOG, [
  ...instructionsTools,
  ...outboundTools,
  ...accountTools,
  ...webhookTools,
  ...inboundContextTools,
  ...managedMailboxTools,
  ...agentInboxTools,
]);
