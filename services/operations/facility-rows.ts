// Every statement that writes the `facilities` table (the row type is FacilityRow in
// services/accounts/rows.ts): a new facility, the one default, and deactivation.
import { sqlRows, sqlRun, type Queryable } from '../shared/sql';

/** Adds a facility (active, not the default); its id. */
export async function insertFacility(tx: Queryable, name: string): Promise<{ id: string }> {
  const [facility] = await sqlRows<{ id: string }>(tx, `INSERT INTO facilities (name) VALUES ($1) RETURNING id`, [
    name,
  ]);
  return facility;
}

/** Every default facility but `keepId` stops being the default. */
export async function clearOtherDefaultFacilities(tx: Queryable, keepId: string): Promise<void> {
  await sqlRun(tx, `UPDATE facilities SET is_default = false WHERE is_default AND id <> $1`, [keepId]);
}

/** No facility is the default. */
export async function clearDefaultFacility(tx: Queryable): Promise<void> {
  await sqlRun(tx, `UPDATE facilities SET is_default = false WHERE is_default`);
}

/** `id` is the default facility. */
export async function markDefaultFacility(tx: Queryable, id: string): Promise<void> {
  await sqlRun(tx, `UPDATE facilities SET is_default = true WHERE id = $1`, [id]);
}

/** Deactivates the facility (it stops being the default). */
export async function deactivateFacilityRow(tx: Queryable, id: string): Promise<void> {
  await sqlRun(tx, `UPDATE facilities SET status = 'inactive', is_default = false WHERE id = $1`, [id]);
}
