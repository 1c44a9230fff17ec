// What every operator CLI command is made of, and the option readers they share.
// Commands of one area live in their own module here and are merged in scripts/admin.ts.
import type { Deps } from '../../services/shared/deps';

export type Options = Record<string, string | boolean | undefined>;

export interface Command {
  usage: string;
  description: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  /** The option a bare argument fills (`mail:show ID` is `mail:show --mail ID`); commands without it take none. */
  positional?: string;
  run(deps: Deps, opts: Options): Promise<unknown>;
  /** Human-readable output; without --json. Defaults to indented JSON. */
  format?(result: unknown): string;
}

/**
 * Fills the command's positional option from a bare argument, refusing bare arguments the
 * command does not take (as a strict parse did).
 */
export function withPositional(command: Command, values: Options, positionals: string[]): Options {
  if (!positionals.length) return values;
  if (!command.positional || positionals.length > 1 || values[command.positional] !== undefined) {
    throw new Error(`unexpected argument: ${positionals.join(' ')}`);
  }
  return { ...values, [command.positional]: positionals[0] };
}

/** A duration such as 90s, 30m, 1h, 2d (or plain seconds). */
export function durationSeconds(opts: Options, name: string, fallback?: string): number {
  const raw = typeof opts[name] === 'string' ? (opts[name] as string) : fallback;
  if (raw === undefined) throw new Error(`--${name} is required`);
  const m = /^(\d+)\s*(s|m|h|d)?$/.exec(raw.trim());
  if (!m) throw new Error(`--${name} must be a duration such as 30m, 1h or 2d`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
}

/** A positive whole number option, at most `max`. */
export function count(opts: Options, name: string, fallback: number, max: number): number {
  if (opts[name] === undefined) return fallback;
  const n = Number(opts[name]);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`--${name} must be a whole number from 1 to ${max}`);
  return n;
}

export function required(opts: Options, name: string): string {
  const v = opts[name];
  if (typeof v !== 'string' || v === '') throw new Error(`--${name} is required`);
  return v;
}

export function cents(opts: Options, name: string): number {
  const n = Number(required(opts, name));
  if (!Number.isInteger(n)) throw new Error(`--${name} must be an integer number of cents`);
  return n;
}

/** An optional true/false option. */
export function flag(opts: Options, name: string): boolean | undefined {
  const v = opts[name];
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new Error(`--${name} must be true or false`);
  return v === 'true';
}

/** An optional string option. */
export function optional(opts: Options, name: string): string | undefined {
  const v = opts[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A signed integer number of cents written with its sign: -500 or +500. */
export function signedCents(opts: Options, name: string): number {
  const raw = required(opts, name);
  if (!/^[+-]\d+$/.test(raw)) throw new Error(`--${name} must be a signed whole number of cents, like +500 or -500`);
  const n = Number(raw);
  if (n === 0 || !Number.isSafeInteger(n)) throw new Error(`--${name} must be a non-zero whole number of cents`);
  return n;
}

/** A left-aligned text table for human output (--json prints the raw result instead). */
export function table(head: string[], rows: Array<Array<string | number | boolean | null>>): string {
  const cells = [head, ...rows.map((r) => r.map((c) => (c === null ? '-' : String(c))))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

interface PgError {
  code?: string;
  constraint?: string;
  detail?: string;
  table?: string;
  column?: string;
  driverError?: PgError;
}

/** The database's code and constraint name of an error, when it came from Postgres. */
export function pgError(err: unknown): PgError {
  const e = err as PgError;
  return {
    ...e.driverError,
    ...e,
    code: e.code ?? e.driverError?.code,
    constraint: e.constraint ?? e.driverError?.constraint,
  };
}

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = pgError(err);
  return e.code === '23505' && (!constraint || e.constraint === constraint);
}

/**
 * What the operator reads when a command fails: the known database refusals in words,
 * a coded refusal with its suggested action, anything else as its message.
 */
export function friendlyError(err: unknown): string {
  const e = pgError(err);
  const detail = e.detail ? ` (${e.detail})` : '';
  switch (e.code) {
    case '22P02':
      return `an id or value is malformed: ${(err as Error).message.replace(/^invalid input syntax for type (\w+)/, 'not a valid $1')}`;
    case '23503': {
      const missing = /Key \((\w+)\)=\(([^)]*)\) is not present in table "(\w+)"/.exec(e.detail ?? '');
      if (missing)
        return `no ${missing[3]
          .replace(/ies$/, 'y')
          .replace(/(ch|sh|x)es$/, '$1')
          .replace(/s$/, '')} ${missing[2]}`;
      return `it refers to something that does not exist${detail}`;
    }
    case '23505':
      return `it already exists${detail}`;
    case '23514':
      return `a value is out of range for ${e.table ?? 'the record'} (rule ${e.constraint})`;
    case '23502':
      return `${e.column ?? 'a value'} is required`;
  }
  const suggested = (err as { options?: { suggestedAction?: string } }).options?.suggestedAction;
  return suggested ? `${(err as Error).message}\n  ${suggested}` : (err as Error).message;
}
