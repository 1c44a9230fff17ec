// The API process: serves REST under the API prefix and documents at the site root.
// The HTTP server has deadlines: a request whose headers or body trickle in (one byte every
// few seconds) is answered 408 and closed instead of holding a connection for ever.
import 'reflect-metadata';
import http from 'node:http';
import type { Server } from 'node:http';
import { config } from '../config';
import { closeDeps, createDeps, Deps } from '../services/deps';
import { createApp } from './app';

export async function startServer(deps: Deps, port = deps.config.port, host = deps.config.host): Promise<Server> {
  const { httpRequestTimeoutMs, httpHeadersTimeoutMs, httpKeepAliveTimeoutMs } = deps.config;
  const server = http.createServer({
    requestTimeout: httpRequestTimeoutMs,
    headersTimeout: httpHeadersTimeoutMs,
    // How often the deadlines are checked: Node's 30 s default would let a 20 s deadline run to 50 s.
    connectionsCheckingInterval: Math.min(1000, httpHeadersTimeoutMs),
  }, createApp(deps).callback());
  server.keepAliveTimeout = httpKeepAliveTimeoutMs;
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
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
