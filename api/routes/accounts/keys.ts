// Agent credentials (issued by member keys) and member API keys. Raw keys appear only
// in the response that creates them.
import { z } from 'zod';
import { defineRoute, RouteDef } from '../../route';
import { AgentIdParams } from './agents.schemas';
import {
  Credential,
  CredentialResponse,
  CredentialParams,
  CredentialRequest,
  MemberKey,
  MemberKeyResponse,
  MemberKeyParams,
  MemberKeyRequest,
} from './keys.schemas';
import {
  createCredential,
  createMemberKey,
  listCredentials,
  listMemberKeys,
  revokeCredential,
  revokeMemberKey,
  rotateMemberKey,
} from '../../../services/accounts/keys';

const WithTestMode = <T extends z.ZodRawShape>(shape: T) => z.object({ ...shape, test_mode: z.boolean() });

export const routes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/v1/agents/:id/credentials',
    summary: 'Issue an agent credential (raw key returned once)',
    description:
      'environment live gives sk_agent_, test gives sk_agent_test_. Member test keys (sk_test_) can issue test credentials only.',
    tags: ['Keys'],
    params: AgentIdParams,
    body: CredentialRequest,
    responses: {
      201: { description: 'Credential with its raw key', schema: CredentialResponse },
      400: { description: 'Validation failed (including an environment other than exactly "live" or "test")' },
      403: { description: 'live_key_required (test member key asking for a live credential)' },
      404: { description: 'Agent not found' },
    },
    handler: async ({ deps, auth, params, body }) => ({
      status: 201,
      body: await createCredential(deps, auth, params.id, body),
    }),
  }),
  defineRoute({
    method: 'get',
    path: '/v1/agents/:id/credentials',
    summary: "List an agent's credentials (prefixes only)",
    tags: ['Keys'],
    params: AgentIdParams,
    responses: {
      200: { description: 'Credentials', schema: WithTestMode({ credentials: z.array(Credential) }) },
      404: { description: 'Agent not found' },
    },
    handler: async ({ deps, auth, params }) => ({
      body: { credentials: await listCredentials(deps, auth, params.id) },
    }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/agents/:id/credentials/:credentialId',
    summary: 'Revoke an agent credential',
    tags: ['Keys'],
    params: CredentialParams,
    responses: {
      200: { description: 'Revoked credential', schema: CredentialResponse },
      403: { description: 'live_key_required (test member key revoking a live credential)' },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params }) => ({
      body: await revokeCredential(deps, auth, params.id, params.credentialId),
    }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/api-keys',
    summary: 'List member API keys (member keys only; agent credentials get 401)',
    tags: ['Keys'],
    responses: { 200: { description: 'Member keys', schema: WithTestMode({ api_keys: z.array(MemberKey) }) } },
    handler: async ({ deps, auth }) => ({ body: { api_keys: await listMemberKeys(deps, auth) } }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/api-keys',
    summary: 'Create a member API key (raw key returned once)',
    tags: ['Keys'],
    body: MemberKeyRequest,
    responses: {
      201: { description: 'Member key with its raw key', schema: MemberKeyResponse },
      400: { description: 'Validation failed' },
      401: { description: 'Agent credentials cannot manage member keys' },
      403: { description: 'live_key_required (test key creating a prod key)' },
    },
    handler: async ({ deps, auth, body }) => ({ status: 201, body: await createMemberKey(deps, auth, body) }),
  }),
  defineRoute({
    method: 'post',
    path: '/v1/api-keys/:id/rotate',
    summary: 'Rotate a member key: a new key (returned once) replaces it; the old one is refused from now on',
    tags: ['Keys'],
    params: MemberKeyParams,
    responses: {
      200: {
        description: 'The new key and the rotated one',
        schema: WithTestMode({ api_key: MemberKey, rotated_key: MemberKey }),
      },
      404: { description: 'Not found' },
      409: { description: 'KEY_NOT_ACTIVE' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await rotateMemberKey(deps, auth, params.id) }),
  }),
  defineRoute({
    method: 'delete',
    path: '/v1/api-keys/:id',
    summary: 'Revoke a member key',
    tags: ['Keys'],
    params: MemberKeyParams,
    responses: {
      200: { description: 'Revoked key', schema: MemberKeyResponse },
      404: { description: 'Not found' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await revokeMemberKey(deps, auth, params.id) }),
  }),
];
