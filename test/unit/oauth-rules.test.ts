import { createHash } from 'node:crypto';
import {
  audienceCovers,
  canonicalResource,
  codeChallengeProblem,
  codeVerifierMatches,
  parseScopes,
  protectedResourcesOf,
  redirectUriProblem,
  redirectUriRegistered,
  resourceAudience,
} from '../../domain/accounts/oauth';
import { ClientMetadata, ClientMetadataDocument } from '../../domain/accounts/oauth-metadata';
import { parseBearer } from '../../domain/accounts/keys';

describe('OAuth rules (domain/accounts/oauth.ts)', () => {
  it('registers https, loopback http and private-use schemes; never fragments, credentials or scripts', () => {
    for (const ok of [
      'https://host.example/cb',
      'http://127.0.0.1/cb',
      'http://127.0.0.1:8765/cb',
      'http://[::1]:9/cb',
      'http://localhost:3000/cb',
      'com.example.app:/oauth',
    ])
      expect({ ok, problem: redirectUriProblem(ok) }).toEqual({ ok, problem: null });
    for (const bad of [
      'http://example.com/cb',
      'http://127.0.0.2.nip.io/cb',
      'https://host.example/cb#x',
      'https://user:pw@host.example/cb',
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
      'myapp:/cb',
      'not a url',
      `https://host.example/${'x'.repeat(2100)}`,
    ])
      expect({ bad, problem: redirectUriProblem(bad) }).toEqual({ bad, problem: expect.any(String) });
  });

  it('matches redirect URIs exactly, except the port of a loopback IP literal (RFC 8252 7.3)', () => {
    const registered = [
      'http://127.0.0.1/callback',
      'http://[::1]:1234/cb',
      'http://localhost:3000/cb',
      'https://a.example/cb',
    ];
    expect(redirectUriRegistered('https://a.example/cb', registered)).toBe(true);
    expect(redirectUriRegistered('http://127.0.0.1:51234/callback', registered)).toBe(true);
    expect(redirectUriRegistered('http://[::1]:80/cb', registered)).toBe(true);
    expect(redirectUriRegistered('http://127.0.0.1:51234/other', registered)).toBe(false);
    expect(redirectUriRegistered('http://127.0.0.1:51234/callback?x=1', registered)).toBe(false);
    expect(redirectUriRegistered('http://localhost:3001/cb', registered)).toBe(false);
    expect(redirectUriRegistered('https://a.example/cb/', registered)).toBe(false);
    expect(redirectUriRegistered('https://A.example/cb#', registered)).toBe(false);
  });

  it('takes PKCE with S256 only, and checks the verifier against its challenge', () => {
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    expect(codeChallengeProblem(challenge, 'S256')).toBeNull();
    expect(codeChallengeProblem(challenge, 'plain')).toMatch(/S256/);
    expect(codeChallengeProblem(challenge, undefined)).toMatch(/S256/);
    expect(codeChallengeProblem(undefined, 'S256')).toMatch(/required/);
    expect(codeChallengeProblem('short', 'S256')).toMatch(/43/);
    expect(codeVerifierMatches(verifier, challenge)).toBe(true);
    expect(codeVerifierMatches('w'.repeat(50), challenge)).toBe(false);
    expect(codeVerifierMatches('v'.repeat(42), createHash('sha256').update('v'.repeat(42)).digest('base64url'))).toBe(
      false,
    );
  });

  it('answers to its two resources in canonical form, and binds tokens to them', () => {
    const r = protectedResourcesOf('https://api.example/api');
    expect(resourceAudience('HTTPS://API.EXAMPLE/api/mcp/', r)).toBe('https://api.example/api/mcp');
    expect(resourceAudience('https://api.example/api', r)).toBe('https://api.example/api');
    expect(resourceAudience('https://api.example/api/v1', r)).toBeNull();
    expect(resourceAudience('https://api.example/api/mcp#f', r)).toBeNull();
    expect(resourceAudience('https://evil.example/api/mcp', r)).toBeNull();
    expect(canonicalResource('https://api.example:443/api')).toBe('https://api.example/api');
    expect(audienceCovers('https://api.example/api/mcp', 'mcp', r)).toBe(true);
    expect(audienceCovers('https://api.example/api/mcp', 'rest', r)).toBe(false);
    expect(audienceCovers('https://api.example/api', 'rest', r)).toBe(true);
    expect(audienceCovers('https://api.example/api', 'mcp', r)).toBe(true);
  });

  it('separates known from unknown scopes', () => {
    expect(parseScopes(' mail.send  agent.read mail.send root ')).toEqual({
      known: ['mail.send', 'agent.read'],
      unknown: ['root'],
    });
    expect(parseScopes(undefined)).toEqual({ known: [], unknown: [] });
  });

  it('reads client metadata within bounds, and documents only for public clients naming themselves', () => {
    expect(ClientMetadata.safeParse({ redirect_uris: ['https://a.example/cb'] }).success).toBe(true);
    expect(ClientMetadata.safeParse({ redirect_uris: ['https://a.example/cb'], client_name: '\u200b' }).success).toBe(
      false,
    );
    const doc = { client_id: 'https://a.example/c.json', client_name: 'A', redirect_uris: ['https://a.example/cb'] };
    expect(ClientMetadataDocument.safeParse(doc).success).toBe(true);
    expect(ClientMetadataDocument.safeParse({ ...doc, client_secret: 'x' }).success).toBe(false);
    expect(ClientMetadataDocument.safeParse({ ...doc, token_endpoint_auth_method: 'private_key_jwt' }).success).toBe(
      false,
    );
    expect(ClientMetadataDocument.safeParse({ ...doc, client_name: undefined }).success).toBe(false);
  });

  it('tells an OAuth access token from an API key by its prefix', () => {
    expect(parseBearer(`Bearer oauth_at_${'a'.repeat(40)}`)).toEqual({
      ok: true,
      token: `oauth_at_${'a'.repeat(40)}`,
      kind: 'oauth_access_token',
    });
    expect(parseBearer(`Bearer oauth_rt_${'a'.repeat(40)}`)).toEqual({ ok: false, reason: 'token_prefix_unknown' });
  });
});
