import type { Deps } from '../services/deps';

export function createMailActivities(deps: Deps) {
  void deps;
  return {};
}
