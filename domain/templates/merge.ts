// Merge templates: the rules of a template's text and of the variables a merge needs,
// with Mustache (mustache.js 4.2.0) as the engine. Only escaped tags are allowed: a
// triple mustache ({{{x}}}), an ampersand tag ({{&x}}) or a partial ({{>x}}) is refused
// when the template is created, so no value given at merge time can become markup
// (docs/decisions/0142-templates-versioned-and-escaped.md). Pure: no I/O.
import Mustache from 'mustache';

export const TEMPLATE_FORMATS = ['html', 'markdown'] as const;
export type TemplateFormat = (typeof TEMPLATE_FORMATS)[number];

/** The largest template body (UTF-8 bytes); the renderer takes at most 2 MB of merged HTML. */
export const MAX_TEMPLATE_BYTES = 512 * 1024;
/** The most variables a merge may carry, and the longest value (characters). */
export const MAX_MERGE_VARIABLES = 200;
export const MAX_MERGE_VALUE_CHARS = 10_000;
/** Variable names: what a CSV header or a JSON key may be, and Mustache reads as one name. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

type Token = [string, string, number, number, Token[]?, number?];

/** Why a template's text cannot be used, or null when it can. */
export function templateProblem(text: string): string | null {
  let tokens: Token[];
  try {
    tokens = Mustache.parse(text) as unknown as Token[];
  } catch (err) {
    return `is not a valid Mustache template: ${(err as Error).message}`;
  }
  const refused = findToken(tokens, (t) => t[0] === '&' || t[0] === '>');
  if (refused) {
    const tag = text.slice(refused[2], refused[3]);
    return refused[0] === '>'
      ? `uses a partial (${tag}); templates have no partials`
      : `uses an unescaped tag (${tag}); values are always escaped, so use {{name}}`;
  }
  const badName = findToken(
    tokens,
    (t) => (t[0] === 'name' || t[0] === '#' || t[0] === '^') && t[1] !== '.' && !validPath(t[1]),
  );
  if (badName) return `names a variable "${badName[1]}" that is not a valid name (letters, digits, _ and -)`;
  return null;
}

function validPath(name: string): boolean {
  return name.split('.').every((part) => VARIABLE_NAME.test(part));
}

function findToken(tokens: Token[], test: (t: Token) => boolean): Token | null {
  for (const t of tokens) {
    if (test(t)) return t;
    if (t[4]) {
      const inner = findToken(t[4], test);
      if (inner) return inner;
    }
  }
  return null;
}

/**
 * The variables a merge must give: the first part of every tag outside sections (a tag
 * inside a section may name the section item's own fields), and every section's name.
 * Sorted, without repeats.
 */
export function requiredVariables(text: string): string[] {
  const names = new Set<string>();
  const tokens = Mustache.parse(text) as unknown as Token[];
  for (const t of tokens) {
    if (t[0] === 'name' || t[0] === '#' || t[0] === '^') {
      if (t[1] !== '.') names.add(t[1].split('.')[0]);
    }
  }
  return [...names].sort();
}

/** Values a merge can take: JSON scalars, and lists and objects of them for sections. */
export type MergeVariables = Record<string, unknown>;

/**
 * The required variables a merge does not give. `emptyIsMissing` (merged batches: a CSV
 * cell left empty) counts an empty or blank string as not given.
 */
export function missingVariables(
  required: readonly string[],
  values: MergeVariables,
  opts: { emptyIsMissing?: boolean } = {},
): string[] {
  return required.filter((name) => {
    if (!Object.prototype.hasOwnProperty.call(values, name)) return true;
    const v = values[name];
    if (v === undefined || v === null) return true;
    return opts.emptyIsMissing === true && typeof v === 'string' && v.trim() === '';
  });
}

/** The template with every value HTML-escaped into it (Mustache's own escaping). */
export function mergeTemplate(text: string, values: MergeVariables): string {
  // No partials: the template was checked to use none, and none are given.
  return Mustache.render(text, values, {});
}
