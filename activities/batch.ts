import type { Deps } from '../services/deps';

export function createBatchActivities(deps: Deps) {
  void deps;
  return {};
}
