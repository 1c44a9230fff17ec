// What every operator CLI command is made of, and the option readers they share.
// Commands of one area live in their own module here and are merged in scripts/admin.ts.
import type { Deps } from '../../services/deps';

export type Options = Record<string, string | boolean | undefined>;

export interface Command {
  usage: string;
  description: string;
  options: Record<string, { type: 'string' | 'boolean' }>;
  run(deps: Deps, opts: Options): Promise<unknown>;
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
