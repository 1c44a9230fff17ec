// The one TypeORM DataSource factory. TypeORM is the Postgres connection pool, the
// transactions (DataSource.transaction hands out an EntityManager) and the runner of
// entities/migrations/*.ts, the only way the schema changes. It maps no entities: services
// write SQL, and the rows that SQL returns are typed interfaces in services/<area>/rows.ts.
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
    migrations: [path.join(__dirname, 'migrations', '*.{ts,js}')],
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    logging: false,
    extra: { max: opts.poolSize ?? 10 },
  });
}
