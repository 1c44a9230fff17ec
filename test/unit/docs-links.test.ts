// The docs (README.md and docs/**/*.md) say only what exists: every relative link resolves to a
// file (and an #anchor to one of its headings, by GitHub's slug rules), every `npm run <script>`
// is a script of package.json, every `npm run admin -- <command>` is a command of the operator
// CLI (its own table, scripts/admin.ts), and every repository path shown in backticks exists.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { commands as adminCommands } from '../../scripts/admin';

const ROOT = path.resolve(__dirname, '..', '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return markdownFiles(full);
    return name.endsWith('.md') ? [full] : [];
  });
}

const DOCS = [path.join(ROOT, 'README.md'), ...markdownFiles(path.join(ROOT, 'docs'))];

/** The text outside fenced code blocks (links and headings there are not links or headings). */
function prose(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** GitHub's anchor for a heading: inline markup dropped, lower case, punctuation removed, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor of a markdown file, repeated headings numbered as GitHub does (-1, -2, ...). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(readFileSync(file, 'utf8')).split('\n')) {
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    result.add(n === 0 ? base : `${base}-${n}`);
  }
  return result;
}

/** The broken relative links of one file, as "target (reason)". */
export function brokenLinks(file: string, text: string): string[] {
  const broken: string[] = [];
  const withoutCode = prose(text).replace(/`[^`\n]*`/g, '');
  for (const m of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
    const [pathPart, anchor] = target.split('#', 2);
    const resolved = pathPart ? path.resolve(path.dirname(file), pathPart) : file;
    if (!existsSync(resolved)) {
      broken.push(`${target} (no such file)`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
      broken.push(`${target} (no such heading)`);
    }
  }
  return broken;
}

const REPO_DIRS = [
  'api',
  'services',
  'domain',
  'workflows',
  'activities',
  'worker',
  'entities',
  'scripts',
  'test',
  'bench',
  'docs',
];

describe('the docs', () => {
  const texts = DOCS.map((file) => ({ file, name: path.relative(ROOT, file), text: readFileSync(file, 'utf8') }));

  it('link only to files and headings that exist', () => {
    const broken = texts.flatMap(({ file, name, text }) => brokenLinks(file, text).map((b) => `${name}: ${b}`));
    expect(broken).toEqual([]);
  });

  it('find a broken link or anchor', () => {
    const file = path.join(ROOT, 'docs', 'README.md');
    expect(brokenLinks(file, '[x](no-such-guide.md) [y](agents.md#no-such-heading) [z](agents.md)')).toEqual([
      'no-such-guide.md (no such file)',
      'agents.md#no-such-heading (no such heading)',
    ]);
    expect(slug('The cluster profile: `npm run stack:cluster`')).toBe('the-cluster-profile-npm-run-stackcluster');
  });

  it('show only npm scripts that package.json has', () => {
    const scripts = Object.keys(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts);
    const unknown = texts.flatMap(({ name, text }) =>
      [...text.matchAll(/npm run (?:-\S+\s+)*([\w:][\w:-]*)/g)]
        .map((m) => m[1])
        .filter((s) => !scripts.includes(s))
        .map((s) => `${name}: ${s}`),
    );
    expect(unknown).toEqual([]);
  });

  it('show only operator CLI commands that exist', () => {
    const unknown = texts.flatMap(({ name, text }) =>
      [...text.matchAll(/npm run (?:-\S+\s+)*admin -- ([\w:][\w:-]*)/g)]
        .map((m) => m[1])
        .filter((c) => c !== 'help' && !(c in adminCommands))
        .map((c) => `${name}: ${c}`),
    );
    expect(unknown).toEqual([]);
  });

  it('show only repository paths that exist', () => {
    const pattern = new RegExp(`^(${REPO_DIRS.join('|')})/[\\w./-]*$`);
    const missing = texts.flatMap(({ name, text }) =>
      [...text.matchAll(/`([^`\s]+)`/g)]
        .map((m) => m[1])
        .filter((p) => pattern.test(p) && !existsSync(path.join(ROOT, p)))
        .map((p) => `${name}: ${p}`),
    );
    expect(missing).toEqual([]);
  });
});
