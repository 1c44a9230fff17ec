// The one TypeORM DataSource factory. Entities live in entities/*.entity.ts and
// migrations in entities/migrations/*.ts; schema changes go through migrations only.
import 'reflect-metadata';
import path from 'node:path';
import { DataSource } from 'typeorm';

export interface DataSourceOptions {
  databaseUrl: string;
  poolSize?: number;
}

export function createDataSource(opts: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: opts.databaseUrl,
    entities: [path.join(__dirname, '*.entity.{ts,js}')],
    migrations: [path.join(__dirname, 'migrations', '*.{ts,js}')],
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    logging: false,
    extra: { max: opts.poolSize ?? 10 },
  });
}
