import type { Deps } from '../services/deps';

export function createInboundExtractionActivities(deps: Deps) {
  void deps;
  return {};
}
