// The check every stored webhook URL passes (endpoints, agent webhooks, A2A push configs), in a
// module of its own so that those services can use it without importing one another.
import type { Deps } from '../shared/deps';
import { errors } from '../../domain/shared/errors';
import type { WebhookUrlKind } from '../../domain/webhooks/urls';
import { checkWebhookTarget, type Resolver } from './http';

/** 400 unless the URL follows the webhook URL rules and its host resolves to public addresses only. */
export async function assertWebhookTarget(
  deps: Deps,
  url: string,
  kind: WebhookUrlKind,
  path: string,
  resolve?: Resolver,
): Promise<void> {
  const check = await checkWebhookTarget(url, kind, deps.config.webhooksAllowInsecureLocal, resolve);
  if (!check.ok) throw errors.validation([{ path, message: (check.error ?? 'refused').replace(/^[a-z_]+: /, '') }]);
}
