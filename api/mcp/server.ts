// The MCP server for one authenticated HTTP request (stateless Streamable HTTP: a new
// server and transport per request, so nothing is shared between callers). The low-level
// Server is used because tools come from the registry with their own JSON Schemas,
// access checks and idempotency rather than from McpServer's callback API. It answers
// `initialize` itself so that only real MCP revisions are negotiated.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  InitializeResult,
  ListToolsRequestSchema,
  McpError,
  ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuthContext } from '../../services/accounts/auth';
import type { Deps } from '../../services/shared/deps';
import { callTool } from './call';
import type { RegisteredTool } from './registry';
import { MCP_PROTOCOL_VERSION, MCP_PROTOCOL_VERSIONS, MCP_SERVER_NAME, MCP_SERVER_VERSION } from './tools';

export const MCP_INSTRUCTIONS = [
  'Postal Mail API: send and receive physical mail.',
  'Every result is in structuredContent.result (the same JSON as the REST API); a result with isError true is a refusal whose text starts with its code.',
  'Agent keys: read your instructions with get_service_md and send its version as service_md_version on tools that change things.',
  'Pass idempotency_key on tools that change things so that a retry has no second effect.',
  'Test keys (sk_agent_test_) use the sandbox: nothing is charged or printed.',
].join(' ');

const SERVER_INFO = { name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION, title: 'Postal Mail API' };
const CAPABILITIES: ServerCapabilities = { tools: { listChanged: false } };

/**
 * The lifecycle's version negotiation: a revision the server speaks is echoed; for any
 * other (newer, older or made up) the server answers with its latest, and the client
 * decides whether it can continue.
 */
export function negotiateProtocolVersion(requested: string): string {
  return MCP_PROTOCOL_VERSIONS.includes(requested) ? requested : MCP_PROTOCOL_VERSION;
}

export function createMcpServer(deps: Deps, auth: AuthContext, tools: RegisteredTool[]): Server {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const server = new Server(SERVER_INFO, { capabilities: CAPABILITIES, instructions: MCP_INSTRUCTIONS });
  server.setRequestHandler(InitializeRequestSchema, (request): InitializeResult => ({
    protocolVersion: negotiateProtocolVersion(request.params.protocolVersion),
    capabilities: CAPABILITIES,
    serverInfo: SERVER_INFO,
    instructions: MCP_INSTRUCTIONS,
  }));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.listing) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return callTool(deps, auth, tool, request.params.arguments);
  });
  return server;
}
