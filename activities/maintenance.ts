import type { Deps } from '../services/deps';

export function createMaintenanceActivities(deps: Deps) {
  void deps;
  return {};
}
