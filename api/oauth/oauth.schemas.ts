// Schemas of the OAuth endpoints at the site root (registration, token, revocation) and of
// the authorization request the consent page reads. Their refusals are RFC 6749 errors,
// {error, error_description}, not the API's error shape. The MCP SDK's schemas of the same
// documents are the base where it has them.
import { z } from 'zod';
import { OAuthTokensSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { ClientMetadata } from '../../domain/accounts/oauth-metadata';

export { ClientMetadata as RegistrationRequest };

export const OAuthErrorBody = z.object({
  error: z
    .string()
    .describe(
      'invalid_request, invalid_client, invalid_grant, invalid_scope, invalid_target, unsupported_grant_type, unsupported_token_type, invalid_client_metadata, invalid_redirect_uri, temporarily_unavailable, too_many_requests, server_error',
    ),
  error_description: z.string(),
});

export const RegistrationResponse = ClientMetadata.extend({
  client_id: z.string().describe('pmc_... (send it as client_id to every OAuth endpoint)'),
  client_id_issued_at: z.number().int(),
  token_endpoint_auth_method: z.literal('none'),
});

const Form = z.string().max(4096);

export const TokenRequest = z.object({
  grant_type: z.enum(['authorization_code', 'refresh_token']),
  client_id: Form.describe('the registered client id, or the URL of the client ID metadata document'),
  code: Form.optional().describe('authorization_code: the code from the redirect'),
  redirect_uri: Form.optional().describe('authorization_code: exactly the redirect_uri of the authorization request'),
  code_verifier: Form.optional().describe('authorization_code: the PKCE verifier (43-128 characters)'),
  refresh_token: Form.optional().describe('refresh_token: the latest refresh token; each is good for one use'),
  resource: Form.optional().describe('RFC 8707: when sent, the resource the grant is bound to'),
  scope: Form.optional().describe('refresh_token: fewer scopes than granted, space-separated'),
});

export const TokenResponse = OAuthTokensSchema.extend({
  access_token: z.string().describe('oauth_at_...: acts as the grant’s agent credential for one hour'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  refresh_token: z.string().describe('oauth_rt_...: good for one use; a reused one ends the grant'),
  scope: z.string(),
});

export const RevocationRequest = z.object({
  token: Form,
  token_type_hint: z.enum(['access_token', 'refresh_token']).optional(),
  client_id: Form,
});

export const AuthorizationQuery = z.object({
  response_type: z.literal('code'),
  client_id: Form,
  redirect_uri: Form.describe('one of the client’s redirect URIs (a loopback IP literal may differ in its port)'),
  code_challenge: Form.describe('base64url SHA-256 of the code verifier'),
  code_challenge_method: z.literal('S256'),
  resource: Form.describe('RFC 8707, required: {base_url}/mcp (MCP only) or {base_url} (REST and MCP)'),
  scope: Form.optional().describe('space-separated scopes; omitted: every scope, for the owner to choose from'),
  state: Form.optional(),
});
