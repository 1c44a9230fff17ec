// Work that may start only once a transaction has committed (a workflow for a row the
// transaction inserted), registered from deep inside that transaction by code that does
// not own it (the ledger's debit runs in its callers' transactions). TypeORM tells its
// subscribers when a query runner commits or rolls back; a callback runs after the
// outermost COMMIT, and is dropped when the transaction rolls back. A callback that never
// runs (the process died at the commit) is what the reconcilers are for: callers record
// their intent in the transaction itself.
import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';

const waiting = new WeakMap<QueryRunner, Array<() => void>>();

const subscriber: EntitySubscriberInterface = {
  afterTransactionCommit({ queryRunner }) {
    // A released savepoint is not the commit: the outer transaction may still roll back.
    if (queryRunner.isTransactionActive) return;
    const callbacks = waiting.get(queryRunner);
    waiting.delete(queryRunner);
    for (const run of callbacks ?? []) run();
  },
  afterTransactionRollback({ queryRunner }) {
    if (!queryRunner.isTransactionActive) waiting.delete(queryRunner);
  },
};

function listen(db: DataSource): void {
  if (!db.subscribers.includes(subscriber)) db.subscribers.push(subscriber);
}

/**
 * Runs `run` once `tx`'s transaction has committed (at once when `tx` is in no
 * transaction: its statements committed already). `run` must not throw and should not
 * block: it is called from the commit's own path.
 */
export function afterCommit(tx: EntityManager, run: () => void): void {
  const runner = tx.queryRunner;
  if (!runner || !runner.isTransactionActive) {
    run();
    return;
  }
  listen(tx.connection);
  const callbacks = waiting.get(runner) ?? [];
  callbacks.push(run);
  waiting.set(runner, callbacks);
}
