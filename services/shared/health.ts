// Readiness: Postgres, Temporal and the object store must all answer.
import type { Deps } from './deps';
import { sqlRun } from './sql';

export interface Health {
  ok: boolean;
  postgres: boolean;
  temporal: boolean;
  object_store: boolean;
}

async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms))]);
}

export async function checkHealth(deps: Deps): Promise<Health> {
  const [postgres, temporal, objectStore] = await Promise.all([
    within(sqlRun(deps.db, 'SELECT 1'), 2000).then(
      () => true,
      () => false,
    ),
    within(deps.temporal.connection.workflowService.getSystemInfo({}), 2000).then(
      () => true,
      () => false,
    ),
    within(deps.storage.healthy(), 2000).catch(() => false),
  ]);
  return { ok: postgres && temporal && objectStore, postgres, temporal, object_store: objectStore };
}
