// Which facility fulfils a piece. Today one active facility serves every member: the
// oldest active one. Sandbox pieces are never assigned (no facility fulfillment).
import type { EntityManager } from 'typeorm';

export const DEFAULT_ORIGIN_ZIP = '78701';

export interface AssignedFacility {
  id: string | null;
  originZip: string;
}

export async function assignFacility(db: Pick<EntityManager, 'query'>, testMode: boolean): Promise<AssignedFacility> {
  if (testMode) return { id: null, originZip: DEFAULT_ORIGIN_ZIP };
  const [row] = await db.query(`SELECT id, origin_zip FROM facilities WHERE status = 'active' ORDER BY created_at, id LIMIT 1`);
  return row ? { id: row.id, originZip: row.origin_zip } : { id: null, originZip: DEFAULT_ORIGIN_ZIP };
}
