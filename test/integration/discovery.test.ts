import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestApp, TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { allRoutes } from '../../api/routes';
import { registeredTools } from '../../api/mcp/tools';
import { DISCOVERY_DOCUMENTS } from '../../api/discovery/documents';
import { SCOPES } from '../../domain/shared/access';
import { KEY_PREFIXES } from '../../domain/accounts/keys';

/**
 * swagger-parser's dependencies are ES modules that Jest's CommonJS runtime cannot load;
 * plain Node can, so the validation runs in a child process.
 */
async function validateOpenApi(doc: unknown): Promise<string> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'openapi-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const script = `import('@apidevtools/swagger-parser').then(async (m) => { const api = await (m.default ?? m).validate(${JSON.stringify(file)}); process.stdout.write(api.openapi); })`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], {
    cwd: path.join(__dirname, '..', '..'),
  });
  return stdout;
}

describe('discovery documents at the site root', () => {
  let app: TestApp;
  let site: ReturnType<typeof client>;
  beforeAll(async () => {
    app = await startTestApp({ worker: false });
    site = client(app.siteUrl);
  });
  afterAll(async () => {
    await app.close();
  });

  it('serves every listed document with its content type', async () => {
    for (const doc of DISCOVERY_DOCUMENTS) {
      const res = await site('GET', doc.path);
      expect({ path: doc.path, status: res.status }).toEqual({ path: doc.path, status: 200 });
      expect(res.headers.get('content-type')).toContain(doc.contentType.split(';')[0]);
    }
  });

  it('publishes a valid OpenAPI 3.1 document naming every route, the MCP endpoint and the site documents', async () => {
    const res = await site('GET', '/openapi.json');
    expect(res.body.openapi).toBe('3.1.0');
    await expect(validateOpenApi(res.body)).resolves.toBe('3.1.0');
    for (const r of allRoutes) {
      const path = r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      expect({ route: `${r.method} ${path}`, present: Boolean(res.body.paths[path]?.[r.method]) }).toEqual({
        route: `${r.method} ${path}`,
        present: true,
      });
    }
    expect(res.body.paths['/mcp'].post).toBeDefined();
    expect(res.body.paths['/agent/auth'].servers).toEqual([{ url: app.siteUrl, description: 'Site root' }]);
    expect(res.body.paths['/llms.txt'].get).toBeDefined();
    const yaml = await site('GET', '/openapi.yaml');
    expect(yaml.headers.get('content-type')).toContain('application/yaml');
    expect(String(yaml.body)).toContain('openapi: 3.1.0');
  });

  it('describes the A2A server in an agent card served at agent-card.json and agent.json', async () => {
    const { body } = await site('GET', '/.well-known/agent.json');
    expect(body).toMatchObject({
      protocolVersion: '0.3.0',
      name: 'Postal Mail API',
      url: `${app.baseUrl}/a2a`,
      preferredTransport: 'JSONRPC',
      version: '1.0.0',
      capabilities: {
        streaming: false,
        pushNotifications: true,
        extensions: [
          { params: { url: `${app.baseUrl}/mcp`, protocol_version: '2025-11-25', server_version: '1.0.1' } },
        ],
      },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    });
    expect(body.test_mode).toBeUndefined();
    expect(body.skills.map((s: { id: string }) => s.id)).toEqual([
      'quote_letter',
      'send_letter',
      'track_letter',
      'read_inbox',
    ]);
    expect((await site('GET', '/.well-known/agent-card.json')).body).toEqual(body);
    const openapi = await site('GET', '/openapi.json');
    expect(openapi.body.paths['/a2a'].post.operationId).toBe('a2a');
    expect(String((await site('GET', '/agents.txt')).body)).toContain(`A2A: ${app.baseUrl}/a2a`);
  });

  it('writes llms.txt in the llms.txt shape and llms-full.txt with every route and tool', async () => {
    const short = String((await site('GET', '/llms.txt')).body);
    expect(short).toMatch(/^# Postal Mail API\n\n> .+\n/);
    expect(short).toContain(`(${app.siteUrl}/openapi.json)`);
    expect(short).toContain(`${app.baseUrl}/mcp`);
    const full = String((await site('GET', '/llms-full.txt')).body);
    for (const r of allRoutes) expect(full).toContain(`### ${r.method.toUpperCase()} ${app.baseUrl}${r.path}\n`);
    for (const t of registeredTools) expect(full).toContain(`### ${t.name} (`);
  });

  it('explains keys in auth.md from the key formats and scope table, and lists the MCP URL in agents.txt', async () => {
    const auth = String((await site('GET', '/auth.md')).body);
    for (const p of KEY_PREFIXES) expect(auth).toContain(`\`${p.prefix}\``);
    for (const s of SCOPES) expect(auth).toContain(`\`${s}\``);
    for (const reason of ['token_missing', 'key_revoked', 'key_expired', 'insufficient_scope', 'live_key_required'])
      expect(auth).toContain(reason);
    expect(auth).toContain('`POST /v1/support/messages`');
    const agents = String((await site('GET', '/agents.txt')).body);
    expect(agents).toContain(`MCP: ${app.baseUrl}/mcp`);
  });

  it('publishes OAuth metadata: the API as a protected resource, and the authorization server for MCP hosts', async () => {
    const pr = (await site('GET', '/.well-known/oauth-protected-resource')).body;
    expect(pr).toMatchObject({
      resource: app.baseUrl,
      authorization_servers: [app.siteUrl],
      bearer_methods_supported: ['header'],
    });
    expect(pr.scopes_supported).toEqual([...SCOPES]);
    const mcp = (await site('GET', '/.well-known/oauth-protected-resource/api/mcp')).body;
    expect(mcp).toMatchObject({ resource: `${app.baseUrl}/mcp`, authorization_servers: [app.siteUrl] });
    const as = (await site('GET', '/.well-known/oauth-authorization-server')).body;
    expect(as).toMatchObject({
      issuer: app.siteUrl,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint: `${app.siteUrl}/oauth/token`,
      authorization_endpoint: `${app.siteUrl}/console/oauth/authorize`,
      api_key_issuance: { key_prefixes: KEY_PREFIXES.map((p) => p.prefix) },
    });
    // The OpenAPI document describes the OAuth endpoints with their RFC 6749 error bodies.
    const doc = (await site('GET', '/openapi.json')).body;
    for (const p of ['/oauth/register', '/oauth/token', '/oauth/revoke'])
      expect(doc.paths[p].post.responses['400'].content['application/json'].schema.required).toEqual([
        'error',
        'error_description',
      ]);
    expect(doc.paths['/console/oauth/authorize'].get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['client_id', 'redirect_uri', 'code_challenge', 'resource']),
    );
  });

  describe('POST /agent/auth', () => {
    it('records a sign-in intent, issues no credentials and says what the human must do', async () => {
      const res = await site('POST', '/agent/auth', {
        json: { email: 'human@example.test', agent_name: 'letter-bot', purpose: 'mail rent checks' },
      });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({
        status: 'awaiting_human',
        credentials_issued: false,
        email: 'human@example.test',
      });
      expect(res.body).not.toHaveProperty('key');
      expect(res.body.human_action_required.map((s: { step: string }) => s.step)).toEqual(
        expect.arrayContaining(['sign_up_or_sign_in', 'verify_email', 'create_agent_key']),
      );
      const [row] = await app.deps.db.query(
        `SELECT email, agent_name, purpose, status FROM agent_auth_intents WHERE id = $1`,
        [res.body.intent_id],
      );
      expect(row).toEqual({
        email: 'human@example.test',
        agent_name: 'letter-bot',
        purpose: 'mail rent checks',
        status: 'awaiting_human',
      });
    });

    it('refuses a bad body with 400 fields[] and rate-limits per IP', async () => {
      const bad = await site('POST', '/agent/auth', { json: { email: 'not-an-email', extra: 1 } });
      expect(bad.status).toBe(400);
      expect(bad.body.fields.map((f: { path: string }) => f.path).sort()).toEqual(['body', 'email']);
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++)
        statuses.push((await site('POST', '/agent/auth', { json: { email: `h${i}@example.test` } })).status);
      // 5 per minute per IP (two of the budget are spent above); a minute boundary can only add one window.
      expect(statuses).toContain(429);
    });
  });
});
