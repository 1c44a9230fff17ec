// The SMTP receiver process: accepts mail for intake aliases on SMTP_PORT until SIGINT/SIGTERM.
import { config } from '../../config';
import { closeDeps, createDeps } from '../../services/shared/create-deps';
import { startSmtpServer } from './server';

async function main() {
  const deps = await createDeps(config, { name: 'smtp' });
  const smtp = await startSmtpServer(deps);
  deps.log.info({ host: smtp.host, port: smtp.port, domain: config.inboundEmailDomain }, 'smtp intake listening');
  // Sessions in progress get SHUTDOWN_GRACE_SECONDS (the server's closeTimeout); drain once.
  let draining = false;
  const stop = () => {
    if (draining) return;
    draining = true;
    void smtp
      .close()
      .then(() => closeDeps(deps))
      .then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
