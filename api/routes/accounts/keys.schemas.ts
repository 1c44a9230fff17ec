// Schemas of agent credentials and member API keys.
import { z } from 'zod';
import { SCOPES } from '../../../domain/shared/access';
import { AgentIdParams } from './agents.schemas';
import { PG_INT_MAX, singleLine } from '../../schemas/common';

const ExpiresInDays = z
  .number()
  .int()
  .min(1, { message: 'must be an integer >= 1' })
  .max(36500)
  .describe('days until the key expires; omit for no expiry');

export const CredentialRequest = z.strictObject({
  scopes: z.array(z.enum(SCOPES)).min(1, { message: 'needs at least one scope' }),
  expires_in_days: ExpiresInDays.optional(),
  environment: z.enum(['live', 'test'], { message: 'must be exactly "live" or "test"' }).default('live'),
  force_approval: z.boolean().default(false).describe('routes every outbound piece from the key to pending_approval'),
  max_daily_pieces: z
    .number()
    .int()
    .min(1, { message: 'must be an integer >= 1' })
    .max(PG_INT_MAX, { message: `must be at most ${PG_INT_MAX}` })
    .nullable()
    .optional()
    .describe('max pieces per 24-hour window; null or omitted = unlimited'),
});

export const CredentialParams = AgentIdParams.extend({ credentialId: z.uuid({ message: 'must be a UUID' }) });

export const Credential = z.object({
  id: z.string(),
  key: z.string().optional().describe('the raw key; present only in the creation response'),
  key_prefix: z.string().describe('first 18 characters of the key (oauth_at_ for the credential of an OAuth grant)'),
  credential_type: z
    .enum(['api_key', 'oauth_grant'])
    .describe(
      'oauth_grant: owned by an OAuth grant of an MCP host; its access tokens act as it, and revoking it ends the grant',
    ),
  agent_id: z.string(),
  scopes: z.array(z.string()),
  status: z.enum(['active', 'revoked']),
  environment: z.enum(['live', 'test']),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  created_at: z.string(),
  force_approval: z.boolean(),
  max_daily_pieces: z.number().int().nullable(),
});

export const MemberKeyRequest = z.strictObject({
  name: singleLine(
    z.string().min(1, { message: 'must be 1-64 characters' }).max(64, { message: 'must be 1-64 characters' }),
  ),
  environment: z
    .enum(['prod', 'test'], { message: 'must be "prod" or "test"' })
    .default('prod')
    .describe('prod keys carry sk_live_, test keys sk_test_'),
  expires_in_days: ExpiresInDays.optional(),
});

export const MemberKeyParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });

export const MemberKey = z.object({
  id: z.string(),
  key: z.string().optional().describe('the raw key; present only on creation or rotation'),
  key_prefix: z.string(),
  name: z.string(),
  environment: z.enum(['prod', 'test']),
  status: z.enum(['active', 'revoked', 'rotated']),
  expires_at: z.string().nullable(),
  created_at: z.string(),
  rotated_to_id: z.string().nullable().describe('the key that replaced this one, once rotated'),
});

/** A credential as the answer of its creation (with the raw key) or revocation. */
export const CredentialResponse = Credential.extend({ test_mode: z.boolean() });

/** A member key as the answer of its creation (with the raw key) or revocation. */
export const MemberKeyResponse = MemberKey.extend({ test_mode: z.boolean() });
