// Typed raw SQL: every statement names the row type it reads, next to the SQL that selects it.
// `db` is whatever runs the statement: the DataSource (deps.db), a transaction's EntityManager
// (tx) or a QueryRunner. The row type has no default that reads as "anything": a call without
// one returns never[], and reading a field of a never row does not compile.
// scripts/codemods/typed-sql.ts rewrites `db.query` calls into these.

/** Anything that runs raw SQL the way TypeORM does (DataSource, EntityManager, QueryRunner). */
export interface Queryable {
  query(text: string, params?: unknown[]): Promise<unknown>;
}

/**
 * TypeORM's postgres driver answers UPDATE and DELETE with [rows, affected count] and every
 * other statement with the rows: an array whose first element is an array is that pair
 * (a row is an object, never an array).
 */
function isRowsAndCount(result: unknown): result is [unknown[], number] {
  return Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number';
}

/** The rows the statement returns (a SELECT, or an INSERT, UPDATE or DELETE with RETURNING). */
export async function sqlRows<Row = never>(db: Queryable, text: string, params?: unknown[]): Promise<Row[]> {
  const result = await db.query(text, params);
  return (isRowsAndCount(result) ? result[0] : result) as Row[];
}

/** The first row the statement returns, or null when it returns none. */
export async function sqlFirst<Row = never>(db: Queryable, text: string, params?: unknown[]): Promise<Row | null> {
  const [row] = await sqlRows<Row>(db, text, params);
  return row ?? null;
}

/** Runs a statement whose result is not read. */
export async function sqlRun(db: Queryable, text: string, params?: unknown[]): Promise<void> {
  await db.query(text, params);
}

/** How many rows an UPDATE or DELETE changed (what postgres reports as its row count). */
export async function sqlAffected(db: Queryable, text: string, params?: unknown[]): Promise<number> {
  const result = await db.query(text, params);
  if (!isRowsAndCount(result)) throw new Error('sqlAffected: not an UPDATE or DELETE');
  return result[1];
}
