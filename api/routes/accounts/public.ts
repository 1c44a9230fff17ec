// Public routes (no key): signup, waitlist, lead status and the discovery directory.
import { A2A_PATH, AGENT_AUTH_PATH, discoveryDocumentUrls } from '../../discovery/documents';
import { defineRoute, RouteDef } from '../../route';
import { accessKey, ENDPOINT_ACCESS } from '../../../domain/shared/access';
import { describeAccess } from '../../../domain/shared/access-summary';
import { getLeadStatus, joinWaitlist, signup } from '../../../services/accounts/signup';
import { API_VERSION } from '../../discovery/openapi';
import {
  DirectoryResponse,
  LeadParams,
  LeadStatusResponse,
  SignupRequest,
  SignupResponse,
  WaitlistRequest,
  WaitlistResponse,
} from './public.schemas';

/** The public routes; the directory at /v1 lists every route, which its caller (routes/index.ts) passes in. */
export function publicRoutes(listRoutes: () => readonly RouteDef[]): RouteDef[] {
  return [
    defineRoute({
      method: 'post',
      path: '/v1/signup',
      summary: 'Create an account for a human (issues no API keys)',
      description:
        'Creates the account and, with lead_id, stitches a waitlist lead to it. No credentials are issued: the human verifies the email, completes KYC and adds a payment method first. 5 requests/minute per IP.',
      tags: ['Public'],
      body: SignupRequest,
      responses: {
        201: { description: 'Account created', schema: SignupResponse },
        400: { description: 'Validation failed (fields[])' },
        409: { description: 'Email already registered (EMAIL_ALREADY_REGISTERED) or lead already stitched' },
        429: { description: 'More than 5 signups per minute from this IP' },
      },
      handler: async ({ deps, body }) => ({ status: 201, body: await signup(deps, body) }),
    }),
    defineRoute({
      method: 'post',
      path: '/v1/waitlist',
      summary: 'Reserve a place for a physical receiving address (assigns nothing)',
      tags: ['Public'],
      body: WaitlistRequest,
      responses: {
        200: { description: 'Reservation recorded', schema: WaitlistResponse },
        400: { description: 'Missing email or callback_url not https' },
        429: { description: 'Rate limit' },
      },
      handler: async ({ deps, body }) => ({ body: await joinWaitlist(deps, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1/leads/:leadId',
      summary: 'Lead status (no personal data; no authentication)',
      tags: ['Public'],
      params: LeadParams,
      responses: {
        200: { description: 'LeadStatus', schema: LeadStatusResponse },
        400: { description: 'leadId does not match ^wl_[a-f0-9]{16}$' },
        404: { description: 'No such lead' },
      },
      handler: async ({ deps, params }) => ({ body: await getLeadStatus(deps, params.leadId) }),
    }),
    defineRoute({
      method: 'get',
      path: '/v1',
      summary: 'Discovery: every endpoint with its keys and scopes, and the documentation URLs',
      tags: ['Public'],
      responses: { 200: { description: 'Directory', schema: DirectoryResponse } },
      handler: async ({ deps }) => {
        const allRoutes = listRoutes();
        const { siteUrl, baseUrl } = deps.config;
        return {
          body: {
            name: 'Postal Mail API',
            api_version: API_VERSION,
            base_url: baseUrl,
            site_url: siteUrl,
            documents: discoveryDocumentUrls(siteUrl),
            agent_auth_url: `${siteUrl}${AGENT_AUTH_PATH}`,
            mcp_url: `${baseUrl}/mcp`,
            a2a_url: `${baseUrl}${A2A_PATH}`,
            endpoints: allRoutes.map((r) => ({
              method: r.method.toUpperCase(),
              path: r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}'),
              summary: r.summary,
              tags: r.tags,
              ...describeAccess(ENDPOINT_ACCESS[accessKey(r.method, r.path)]),
            })),
          },
        };
      },
    }),
  ];
}
