import type { Deps } from '../services/deps';

export function createHandlingActivities(deps: Deps) {
  void deps;
  return {};
}
