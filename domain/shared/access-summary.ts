// Readable views of the access table (domain/shared/access.ts): the discovery directory and the
// scope table in docs/agents.md are both derived from it, never hand-listed.
import type { Access } from './access';
import type { KeyKind } from '../accounts/keys';

const KIND_LABELS: Record<KeyKind, string> = {
  member: 'member (sk_live_)',
  member_test: 'member test (sk_test_)',
  agent: 'agent (sk_agent_)',
  agent_test: 'agent test (sk_agent_test_)',
  facility: 'facility (sk_facility_)',
};

export interface AccessSummary {
  /** 'public' or the key kinds allowed. */
  auth: Array<'public' | KeyKind>;
  /** Agent keys need every one of these. */
  scopes: string[];
  /** Agent keys need at least one of these. */
  any_scope: string[];
  live_only: boolean;
  test_only: boolean;
  sandbox_unsupported: boolean;
  version_guard: boolean;
}

export function describeAccess(access: Access): AccessSummary {
  return {
    auth: access.callers === 'public' ? ['public'] : [...access.callers],
    scopes: [...(access.scopes ?? [])],
    any_scope: [...(access.anyScope ?? [])],
    live_only: Boolean(access.liveOnly),
    test_only: Boolean(access.testOnly),
    sandbox_unsupported: Boolean(access.sandboxUnsupported),
    version_guard: Boolean(access.versionGuard),
  };
}

function guards(a: AccessSummary, raw: Access): string {
  const out: string[] = [];
  if (a.live_only) out.push('live keys only (test: 403 live_key_required)');
  if (a.sandbox_unsupported) out.push('live keys only (test: 403 sandbox_not_supported)');
  if (a.test_only) out.push('test keys only');
  if (a.version_guard) out.push('agent keys send X-Service-MD-Version');
  if (raw.ipRateLimit === 'signup') out.push('5 requests/minute per IP');
  if (raw.ipRateLimit === 'public') out.push('standard rate per IP');
  return out.join('; ');
}

/** The markdown table of every row: endpoint, key kinds, agent scopes, guards. */
export function renderAccessTable(table: Record<string, Access>): string {
  const lines = ['| endpoint | keys | agent scopes | guards |', '|---|---|---|---|'];
  for (const [endpoint, raw] of Object.entries(table)) {
    const a = describeAccess(raw);
    const keys = a.auth[0] === 'public' ? 'none (public)' : (a.auth as KeyKind[]).map((k) => KIND_LABELS[k]).join(', ');
    const scopeText = [a.scopes.join(' + '), a.any_scope.length ? `one of ${a.any_scope.join(', ')}` : '']
      .filter(Boolean)
      .join('; ');
    const agentCallers = a.auth.includes('agent') || a.auth.includes('agent_test');
    lines.push(`| \`${endpoint}\` | ${keys} | ${agentCallers ? scopeText || '—' : '—'} | ${guards(a, raw) || '—'} |`);
  }
  return lines.join('\n');
}
