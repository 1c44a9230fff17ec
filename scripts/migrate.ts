// Creates the database if absent and applies pending migrations.
import { loadConfig } from '../config';
import { ensureDatabase, migrate } from './stack';

async function main() {
  const config = loadConfig();
  await ensureDatabase(config.databaseUrl);
  const ran = await migrate(config.databaseUrl);
  console.log(ran.length ? `applied: ${ran.join(', ')}` : 'up to date');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
