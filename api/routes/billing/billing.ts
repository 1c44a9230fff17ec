// Credits balance.
import { z } from 'zod';
import { defineRoute, RouteDef } from '../../route';
import { getBalance } from '../../../services/billing/credits';

const BalanceBody = z.object({
  balance_cents: z.number().int(),
  balance_display: z.string(),
  currency: z.literal('usd'),
  billing_url: z.string(),
  test_mode: z.boolean(),
});

export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/v1/credits',
    summary: 'Prepaid credits balance',
    tags: ['Billing'],
    responses: { 200: { description: 'Balance', schema: BalanceBody } },
    handler: async ({ deps, auth }) => ({ body: await getBalance(deps, auth.memberId!) }),
  }),
];
