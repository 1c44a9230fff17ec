// What every service function needs, built once per process and passed explicitly.
import { Client, Connection } from '@temporalio/client';
import type { DataSource } from 'typeorm';
import type { Config } from '../config';
import { createDataSource } from '../entities/data-source';
import { createLogger, Logger } from './logger';
import { createObjectStorage, ObjectStorage } from './storage';

export interface Deps {
  config: Config;
  db: DataSource;
  temporal: Client;
  storage: ObjectStorage;
  log: Logger;
}

export async function createDeps(config: Config, opts: { poolSize?: number; name?: string } = {}): Promise<Deps> {
  const db = createDataSource({ databaseUrl: config.databaseUrl, poolSize: opts.poolSize ?? 10 });
  await db.initialize();
  // Lazy: the API starts even while Temporal is down; /healthz reports it.
  const connection = Connection.lazy({ address: config.temporalAddress });
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  return {
    config,
    db,
    temporal,
    storage: createObjectStorage(config),
    log: createLogger(config.logLevel, opts.name),
  };
}

export async function closeDeps(deps: Deps): Promise<void> {
  await deps.temporal.connection.close().catch(() => undefined);
  deps.storage.client.destroy();
  if (deps.db.isInitialized) await deps.db.destroy();
}
