// The shape of an OAuth client's metadata, from a registration request (RFC 7591) or a
// client ID metadata document (draft-ietf-oauth-client-id-metadata-document): the MCP
// SDK's RFC 7591 schema with this server's bounds and rules on top (redirect URIs per
// domain/accounts/oauth.ts, only the authorization code and refresh token grants, public
// clients only). Unknown members are dropped, as RFC 7591 asks.
import { z } from 'zod';
import { OAuthClientMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { hasVisibleCharacter, hiddenCharacterProblem, VISIBLE_CHARACTER_MESSAGE } from '../workflow-safe/visible-text';
import { MAX_URL_LENGTH } from '../webhooks/urls';
import { MAX_CLIENT_NAME_LENGTH, MAX_REDIRECT_URIS, redirectUriProblem } from './oauth';

const RedirectUri = z
  .string()
  .max(MAX_URL_LENGTH, { message: `must be at most ${MAX_URL_LENGTH} characters` })
  .superRefine((value, ctx) => {
    const problem = redirectUriProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const Https = z
  .string()
  .max(MAX_URL_LENGTH)
  .refine(
    (v) => {
      try {
        return new URL(v).protocol === 'https:';
      } catch {
        return false;
      }
    },
    { message: 'must be an https URL' },
  );

const Text = (max: number) => z.string().max(max, { message: `must be at most ${max} characters` });

/** The name the consent page shows: visible, one line, nothing hidden that could make it read as another (decision 0110). */
const ClientName = (max: number) =>
  Text(max)
    .refine(hasVisibleCharacter, { message: VISIBLE_CHARACTER_MESSAGE })
    .superRefine((v, ctx) => {
      const problem = hiddenCharacterProblem(v, 'single_line');
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

export const ClientMetadata = OAuthClientMetadataSchema.extend({
  redirect_uris: z
    .array(RedirectUri)
    .min(1, { message: 'needs at least one redirect URI' })
    .max(MAX_REDIRECT_URIS, { message: `at most ${MAX_REDIRECT_URIS} redirect URIs` }),
  client_name: ClientName(MAX_CLIENT_NAME_LENGTH)
    .optional()
    .describe('shown to the owner on the consent page, marked unverified'),
  client_uri: Https.optional(),
  logo_uri: Https.optional().describe('stored; the consent page loads no image from another host'),
  tos_uri: Https.optional(),
  policy_uri: Https.optional(),
  scope: Text(2000).optional().describe('space-separated scopes the client intends to ask for'),
  contacts: z.array(Text(254)).max(10).optional(),
  grant_types: z
    .array(z.enum(['authorization_code', 'refresh_token'], { message: 'only authorization_code and refresh_token' }))
    .max(2)
    .optional(),
  response_types: z
    .array(z.literal('code', { message: 'only code' }))
    .max(1)
    .optional(),
  token_endpoint_auth_method: Text(64)
    .optional()
    .describe('answered as "none": every client is public (PKCE), no client secret is issued'),
  jwks_uri: Https.optional(),
  jwks: z.unknown().optional(),
  software_id: Text(200).optional(),
  software_version: Text(200).optional(),
  software_statement: Text(8192).optional(),
});
export type ClientMetadata = z.infer<typeof ClientMetadata>;

/**
 * A client ID metadata document: the metadata plus its own URL as `client_id`, a
 * `client_name`, no client secret, and no authentication at the token endpoint other than
 * none (this server does not verify private_key_jwt).
 */
export const ClientMetadataDocument = ClientMetadata.extend({
  client_id: Text(MAX_URL_LENGTH),
  client_name: ClientName(MAX_CLIENT_NAME_LENGTH),
  client_secret: z.undefined({ message: 'a metadata document must not contain a client secret' }).optional(),
  client_secret_expires_at: z.undefined({ message: 'a metadata document must not contain a client secret' }).optional(),
  token_endpoint_auth_method: z
    .literal('none', { message: 'only "none" is supported: clients are public and use PKCE' })
    .optional(),
});
export type ClientMetadataDocument = z.infer<typeof ClientMetadataDocument>;

/** The issues of a failed parse as one sentence (`redirect_uris.0: must use https; ...`). */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join('.') : 'body'}: ${i.message}`)
    .join('; ');
}
