// Builds the Deps of a process (API, worker, CLI) and closes them again.
import type { EventEmitter } from 'node:events';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../../config';
import { createDataSource } from '../../entities/data-source';
import { installNotifierWakeUps } from '../notifications/notices';
import type { Deps } from './deps';
import { createLogger } from './logger';
import { createObjectStorage } from './storage';
import { createRenderers } from './rendering';

export async function createDeps(config: Config, opts: { poolSize?: number; name?: string } = {}): Promise<Deps> {
  const log = createLogger(config.logLevel, opts.name);
  const db = createDataSource({ databaseUrl: config.databaseUrl, poolSize: opts.poolSize ?? 10 });
  await db.initialize();
  // A new connection that Postgres terminates while the pool hands it out can emit 'error'
  // before anyone listens (pg-pool drops its idle listener, TypeORM adds its own a tick
  // later); unheard, that error crashes the process. A listener for the connection's whole
  // life keeps the process up; the pool and TypeORM still discard the dead connection.
  const pool = (db.driver as unknown as { master?: EventEmitter }).master;
  pool?.on('connect', (connection: EventEmitter) =>
    connection.on('error', (err: Error) => log.warn({ err }, 'postgres connection lost')),
  );
  // Lazy: the API starts even while Temporal is down; /healthz reports it.
  const connection = Connection.lazy({ address: config.temporalAddress });
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  const deps: Deps = {
    config,
    db,
    temporal,
    storage: createObjectStorage(config),
    log,
    renderers: createRenderers(config.rendering, log),
  };
  // A transaction that records an owner notification wakes the member's notifier once it commits.
  installNotifierWakeUps(deps);
  return deps;
}

export async function closeDeps(deps: Deps): Promise<void> {
  await deps.renderers.close().catch(() => undefined);
  await deps.temporal.connection.close().catch(() => undefined);
  deps.storage.client.destroy();
  if (deps.db.isInitialized) await deps.db.destroy();
}
