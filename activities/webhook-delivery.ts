import type { Deps } from '../services/deps';

export function createWebhookDeliveryActivities(deps: Deps) {
  void deps;
  return {};
}
