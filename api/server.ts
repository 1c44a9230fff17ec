// The API process: serves REST under the API prefix and documents at the site root.
import 'reflect-metadata';
import type { Server } from 'node:http';
import { config } from '../config';
import { closeDeps, createDeps, Deps } from '../services/deps';
import { createApp } from './app';

export async function startServer(deps: Deps, port = deps.config.port, host = deps.config.host): Promise<Server> {
  const app = createApp(deps);
  return new Promise((resolve) => {
    const server = app.listen(port, host, () => resolve(server));
    server.keepAliveTimeout = 65000;
  });
}

async function main() {
  const deps = await createDeps(config, { name: 'api' });
  const server = await startServer(deps);
  deps.log.info({ url: config.baseUrl }, 'api listening');
  const stop = () => server.close(() => void closeDeps(deps).then(() => process.exit(0)));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
