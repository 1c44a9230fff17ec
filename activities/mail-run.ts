import type { Deps } from '../services/deps';

export function createMailRunActivities(deps: Deps) {
  void deps;
  return {};
}
