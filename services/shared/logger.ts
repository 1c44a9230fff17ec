// Structured logging. Authorization headers and anything that looks like a key or
// secret are redacted so raw credentials never reach the logs.
import pino, { Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, name = 'postal-mail'): Logger {
  return pino({
    name,
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'authorization',
        'key',
        'secret',
        '*.key',
        '*.secret',
        '*.password',
      ],
      censor: '[redacted]',
    },
  });
}
