// The SMTP receiver for intake aliases (MX target of INBOUND_EMAIL_DOMAIN). RCPT TO is
// checked against the aliases as it arrives (unknown 550 5.1.1, archived 550 5.2.1,
// paused 450 4.2.1); the message size is capped (SIZE is advertised; larger mail gets
// 552 5.3.4); DATA goes through the same intake service as the HTTP intake. No AUTH:
// it accepts mail for its own aliases only, like any MX host. TLS is not offered here;
// see docs/agents.md (Pointing mail at the intake) for production.
import type { AddressInfo } from 'node:net';
import { SMTPServer, SMTPServerAddress, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { ApiError } from '../../domain/shared/errors';
import type { Deps } from '../../services/shared/deps';
import { aliasForDelivery, messageTooLarge, receiveEmail } from '../../services/inbound-email/intake';

/** An SMTP reply for an intake refusal: code, enhanced status and the refusal's own words. */
export function smtpReplyFor(err: unknown): { responseCode: number; message: string } {
  if (err instanceof ApiError) {
    const byCode: Record<string, [number, string]> = {
      ALIAS_NOT_FOUND: [550, '5.1.1'],
      ALIAS_ARCHIVED: [550, '5.2.1'],
      ALIAS_PAUSED: [450, '4.2.1'],
      MESSAGE_TOO_LARGE: [552, '5.3.4'],
      MALFORMED_MESSAGE: [554, '5.6.0'],
      ATTACHMENT_REFUSED: [554, '5.7.1'],
    };
    const hit = err.code ? byCode[err.code] : undefined;
    if (hit) return { responseCode: hit[0], message: `${hit[1]} ${err.message}` };
  }
  return {
    responseCode: 451,
    message: '4.3.0 Temporary failure while storing the message; nothing was kept. Try again later.',
  };
}

function smtpError(err: unknown): Error & { responseCode: number } {
  const reply = smtpReplyFor(err);
  return Object.assign(new Error(reply.message), { responseCode: reply.responseCode });
}

export interface RunningSmtpServer {
  server: SMTPServer;
  port: number;
  host: string;
  close(): Promise<void>;
}

export function createSmtpServer(deps: Deps): SMTPServer {
  const limit = deps.config.inboundMaxMessageBytes;
  return new SMTPServer({
    name: deps.config.inboundEmailDomain,
    banner: 'Postal Mail API intake',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: limit,
    logger: false,
    // close() waits this long for sessions in progress before it disconnects them.
    closeTimeout: deps.config.shutdownGraceSeconds * 1000,
    async onRcptTo(address: SMTPServerAddress, _session: SMTPServerSession, callback: (err?: Error | null) => void) {
      try {
        await aliasForDelivery(deps, address.address);
        callback();
      } catch (err) {
        callback(smtpError(err));
      }
    },
    onData(
      stream: SMTPServerDataStream,
      session: SMTPServerSession,
      callback: (err?: Error | null, message?: string) => void,
    ) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (!stream.sizeExceeded) chunks.push(chunk);
      });
      stream.on('error', (err) => callback(smtpError(err)));
      stream.on('end', () => {
        void (async () => {
          if (stream.sizeExceeded) return callback(smtpError(messageTooLarge(limit)));
          const raw = Buffer.concat(chunks);
          const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : null;
          const ids: string[] = [];
          try {
            // One item per alias recipient; a retried delivery finds items already made by Message-ID.
            for (const rcpt of session.envelope.rcptTo) {
              const result = await receiveEmail(deps, {
                raw,
                recipient: rcpt.address,
                captureMethod: 'smtp',
                envelopeFrom,
              });
              ids.push(result.item_id);
            }
            callback(null, `2.0.0 Accepted as ${ids.join(', ')}`);
          } catch (err) {
            if (!(err instanceof ApiError)) deps.log.error({ err }, 'smtp intake failed');
            callback(smtpError(err));
          }
        })();
      });
    },
  });
}

export async function startSmtpServer(
  deps: Deps,
  opts: { port?: number; host?: string } = {},
): Promise<RunningSmtpServer> {
  const server = createSmtpServer(deps);
  const host = opts.host ?? deps.config.host;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? deps.config.smtpPort, host, () => resolve());
  });
  server.on('error', (err) => deps.log.error({ err }, 'smtp server error'));
  const port = (server as unknown as { server: { address(): AddressInfo } }).server.address().port;
  return {
    server,
    port,
    host,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
