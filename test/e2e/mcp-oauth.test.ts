// End to end as an MCP host connects: the official MCP TypeScript SDK's client, with its
// OAuth client provider and Streamable HTTP transport, against the real stack. It finds the
// authorization server from the 401, registers itself, sends the owner to the consent page,
// where headless Chromium signs in with the member key and approves; then it lists and calls
// tools with the access token, refreshes it when it has expired, and after revocation is
// refused. Screenshots of the consent page and of the agent's connections are saved under
// .data/screenshots.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { startTestApp, TestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { launchBrowser, offMachineRequests, TestBrowser } from '../helpers/browser';
import { callbackServer, CallbackServer, postForm } from '../helpers/oauth';
import { hashKey } from '../../domain/accounts/keys';

/** What an MCP host keeps between runs, in memory. */
class HostProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  constructor(private readonly callback: string) {}
  get redirectUrl() {
    return this.callback;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Letter Desk (test host)',
      redirect_uris: [this.callback],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return randomBytes(8).toString('hex');
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: { result?: any };
}

describe('an MCP host connects with the official SDK client and the owner’s consent in a browser', () => {
  let app: TestApp;
  let browser: TestBrowser;
  let cb: CallbackServer;
  const clients: Client[] = [];
  beforeAll(async () => {
    app = await startTestApp();
    browser = await launchBrowser();
    cb = await callbackServer();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await browser?.close();
    await cb?.close();
    await app?.close();
  });

  const connect = async (provider: HostProvider) => {
    const client = new Client({ name: 'letter-desk', version: '1.0.0' });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), { authProvider: provider }));
    return client;
  };

  it('registration → consent → token → tools/list → create_test_outbound_mail → refresh → revoke → 401', async () => {
    const member = await newMember(app.deps);
    const provider = new HostProvider(cb.url);

    // 1. No token: the 401 leads the SDK to the metadata, registration and the authorization URL.
    const transport = new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), { authProvider: provider });
    const first = new Client({ name: 'letter-desk', version: '1.0.0' });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info?.client_id).toMatch(/^pmc_/);
    const url = provider.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${app.siteUrl}/console/oauth/authorize`);
    expect(url.searchParams.get('resource')).toBe(`${app.baseUrl}/mcp`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');

    // 2. The owner, in a browser: sign in, read, choose, approve.
    const { page, requests, errors } = await browser.open(url.toString());
    await page.waitForURL(/\/console\/sign-in/);
    await page.fill('#key', member.key);
    const callbackHit = cb.next();
    await Promise.all([page.waitForURL(/\/console\/oauth\/authorize/), page.click('button[type=submit]')]);
    await page.waitForSelector('text=Connect Letter Desk (test host) to your account?');
    expect(await page.textContent('main')).toContain('unverified');
    expect(await page.isChecked('input[name=environment][value=test]')).toBe(true);
    await page.selectOption('#agent', 'new');
    await page.fill('#agent_name', 'letter-desk');
    await page.uncheck('input[name=scopes][value="webhook.manage"]');
    await page.check('input[name=force_approval]');
    await browser.screenshot(page, 'oauth-consent', { fullPage: true });
    await page.click('button[value=approve]');
    const callback = await callbackHit;
    expect(callback.get('iss')).toBe(app.siteUrl);
    expect(errors).toEqual([]);
    expect(offMachineRequests(requests)).toEqual([]);

    // 3. The code for tokens, then the MCP session with the access token.
    await transport.finishAuth(callback.get('code')!);
    const tokens = provider.saved!;
    expect(tokens.access_token).toMatch(/^oauth_at_/);
    expect(tokens.scope!.split(' ')).not.toContain('webhook.manage');
    const client = await connect(provider);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['create_test_outbound_mail', 'get_service_md']));

    const md = (await client.callTool({ name: 'get_service_md', arguments: {} })) as ToolResult;
    const created = (await client.callTool({
      name: 'create_test_outbound_mail',
      arguments: {
        recipient_name: 'Ada Lovelace',
        recipient_line1: '12 Analytical Way',
        recipient_city: 'Austin',
        recipient_state: 'TX',
        recipient_zip: '78701',
        service_md_version: md.structuredContent!.result.version,
      },
    })) as ToolResult;
    expect(created.isError).toBeFalsy();
    // The grant's safeguard (force_approval) applies exactly as on an agent key.
    expect(created.structuredContent!.result).toMatchObject({ test_mode: true, status: 'pending_approval' });
    const [row] = await app.deps.db.query(
      `SELECT o.agent_id, a.name FROM outbound_mail o JOIN agents a ON a.id = o.agent_id WHERE o.id = $1`,
      [created.structuredContent!.result.id],
    );
    expect(row.name).toBe('letter-desk');

    // 4. The access token expires: the SDK refreshes it on the 401 and the call goes through.
    await app.deps.db.query(
      `UPDATE oauth_access_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = $1`,
      [hashKey(tokens.access_token)],
    );
    const again = (await client.callTool({ name: 'get_service_md', arguments: {} })) as ToolResult;
    expect(again.isError).toBeFalsy();
    expect(provider.saved!.access_token).not.toBe(tokens.access_token);
    expect(provider.saved!.refresh_token).not.toBe(tokens.refresh_token);

    // The owner sees the connection on the agent's page, with Revoke.
    await page.goto(`${app.siteUrl}/console/agents/${row.agent_id}#connections`);
    expect(await page.textContent('#connections')).toContain('Letter Desk (test host)');
    await browser.screenshot(page, 'oauth-agent-connections', { fullPage: true });

    // 5. The host revokes (RFC 7009): its tokens are refused from then on.
    const revoked = await postForm(`${app.siteUrl}/oauth/revoke`, {
      token: provider.saved!.refresh_token!,
      token_type_hint: 'refresh_token',
      client_id: provider.info!.client_id,
    });
    expect(revoked.status).toBe(200);
    const refused = await fetch(`${app.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // The SDK client itself: its refresh is refused too, so it asks for a new authorization.
    await expect(client.listTools()).rejects.toThrow();

    // A request from a client nobody registered is shown to the owner, never sent anywhere.
    const unknown = new URL(url);
    unknown.searchParams.set('client_id', 'pmc_nobody');
    const shown = await page.goto(unknown.toString());
    expect(shown!.status()).toBe(400);
    expect(await page.textContent('main')).toContain('invalid_client');
    await browser.screenshot(page, 'oauth-refused');
    await page.close();
  });
});
