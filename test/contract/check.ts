// Checks recorded responses (test/contract/recorder.ts) against the OpenAPI document, as a
// validating proxy would: each response is matched to its operation by method and path
// (under the path's server), its status must be documented, its content type must be one the
// status documents, and a JSON body must validate against that schema (Ajv, JSON Schema
// 2020-12, formats checked). Also counts which operations and statuses the run exercised.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { ErrorObject, ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ResponseRecord } from './recorder';

type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const DOC_ID = 'https://contract.test/openapi.json';

export interface Operation {
  /** `POST /v1/mail`: the method and the document's path template. */
  key: string;
  method: string;
  template: string;
  operationId: string;
  responses: Record<string, Json>;
  pattern: RegExp;
  /** Literal characters of the template: the more, the more specific (`/v1/mail/runs` before `/v1/mail/{id}`). */
  specificity: number;
}

export interface Mismatch {
  operation: string;
  status: number;
  problem: string;
  test?: string;
  test_name?: string;
  url: string;
}

export interface CheckResult {
  records: number;
  checked: number;
  /** Responses to paths or methods the document does not have (console pages, probes, deliberate 404s). */
  outside: number;
  mismatches: Mismatch[];
  /** operation key -> status -> responses seen */
  seen: Record<string, Record<string, number>>;
  operations: Operation[];
}

const pointer = (...segments: string[]) =>
  segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

export function operationsOf(doc: Json): Operation[] {
  const ops: Operation[] = [];
  const rootServers = (doc.servers as Array<{ url: string }> | undefined) ?? [{ url: '/' }];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const servers = (item.servers as Array<{ url: string }> | undefined) ?? rootServers;
    const prefixes = servers.map((s) => new URL(s.url, 'http://server.invalid').pathname.replace(/\/$/, ''));
    const body = template
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    const pattern = new RegExp(
      `^(?:${prefixes.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})${body}$`,
    );
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      ops.push({
        key: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        operationId: String(op.operationId),
        responses: (op.responses ?? {}) as Record<string, Json>,
        pattern,
        specificity: template.replace(/\{[^}]+\}/g, '').length,
      });
    }
  }
  return ops.sort((a, b) => b.specificity - a.specificity);
}

function mediaType(contentType: string | null): string | null {
  return contentType ? contentType.split(';')[0].trim().toLowerCase() : null;
}

function documentedMedia(content: Record<string, unknown>, media: string): string | undefined {
  const keys = Object.keys(content);
  return (
    keys.find((k) => k.toLowerCase() === media) ??
    keys.find((k) => k.toLowerCase() === `${media.split('/')[0]}/*`) ??
    keys.find((k) => k === '*/*')
  );
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  const lines = (errors ?? []).slice(0, 6).map((e) => {
    const extra =
      e.keyword === 'additionalProperties'
        ? ` (${(e.params as { additionalProperty: string }).additionalProperty})`
        : e.keyword === 'enum'
          ? ` (${JSON.stringify((e.params as { allowedValues: unknown[] }).allowedValues).slice(0, 200)})`
          : '';
    return `${e.instancePath || '/'} ${e.message}${extra}`;
  });
  return lines.join('; ');
}

export class ContractChecker {
  readonly operations: Operation[];
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    this.operations = operationsOf(doc);
    this.ajv = new Ajv2020({ strict: false, allErrors: true, logger: false, validateFormats: true });
    addFormats(this.ajv);
    // OpenAPI's own formats: binary bodies are not JSON, the numeric ones are ranges zod already states.
    for (const f of ['binary', 'byte', 'int32', 'int64', 'float', 'double', 'password']) this.ajv.addFormat(f, true);
    this.ajv.addSchema({ ...doc, $id: DOC_ID });
  }

  match(method: string, url: string): Operation | undefined {
    const pathname = new URL(url, 'http://server.invalid').pathname;
    return this.operations.find((op) => op.method === method && op.pattern.test(pathname));
  }

  private validator(op: Operation, status: string, media: string): ValidateFunction {
    const key = `${op.key} ${status} ${media}`;
    let v = this.validators.get(key);
    if (!v) {
      const ref = `${DOC_ID}#/${pointer('paths', op.template, op.method.toLowerCase(), 'responses', status, 'content', media, 'schema')}`;
      v = this.ajv.compile({ $ref: ref });
      this.validators.set(key, v);
    }
    return v;
  }

  /** The problem with one response, or null when it matches the document. */
  problem(op: Operation, record: ResponseRecord): string | null {
    const status = String(record.status);
    const documented = op.responses[status] ?? op.responses[`${status[0]}XX`] ?? op.responses.default;
    if (!documented) return `status ${status} is not documented (documented: ${Object.keys(op.responses).join(', ')})`;
    const content = documented.content as Record<string, Json> | undefined;
    const media = mediaType(record.content_type);
    if (!content || !Object.keys(content).length) {
      if (record.bytes > 0 && !(record.status >= 300 && record.status < 400))
        return `a ${media ?? 'typeless'} body where ${status} documents none`;
      return null;
    }
    if (record.bytes === 0 || record.method === 'HEAD') return null;
    if (!media) return `no content type where ${status} documents ${Object.keys(content).join(', ')}`;
    const documentedType = documentedMedia(content, media);
    if (!documentedType) return `content type ${media} where ${status} documents ${Object.keys(content).join(', ')}`;
    if (record.body === undefined || !content[documentedType]?.schema) return null;
    let body: unknown;
    try {
      body = JSON.parse(record.body);
    } catch {
      return `${media} body is not JSON`;
    }
    const validate = this.validator(
      op,
      Object.keys(op.responses).includes(status) ? status : 'default',
      documentedType,
    );
    if (validate(body)) return null;
    return `body does not match the ${status} schema: ${describeErrors(validate.errors)}`;
  }
}

export function readRecords(dir: string): ResponseRecord[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.startsWith('responses-') && f.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const records: ResponseRecord[] = [];
  for (const f of files) {
    for (const line of readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      if (!line) continue;
      try {
        records.push(JSON.parse(line) as ResponseRecord);
      } catch {
        // a line cut short by a worker that was killed mid-write
      }
    }
  }
  return records;
}

export function checkRecords(doc: Json, records: ResponseRecord[]): CheckResult {
  const checker = new ContractChecker(doc);
  const result: CheckResult = {
    records: records.length,
    checked: 0,
    outside: 0,
    mismatches: [],
    seen: {},
    operations: checker.operations,
  };
  for (const record of records) {
    const op = checker.match(record.method, record.url);
    if (!op) {
      result.outside++;
      continue;
    }
    result.checked++;
    const statuses = (result.seen[op.key] ??= {});
    statuses[record.status] = (statuses[record.status] ?? 0) + 1;
    const problem = checker.problem(op, record);
    if (problem)
      result.mismatches.push({
        operation: op.key,
        status: record.status,
        problem,
        test: record.test,
        test_name: record.test_name,
        url: record.url.slice(0, 200),
      });
  }
  return result;
}
