import type { KnownGap } from '../../src/routes/mapping.ts';
import type { JsonValue } from '../../src/v2/xml.ts';
import { decodeRailsXml } from './rails-xml.ts';

/**
 * Comparison of two v2 answers, as the differential tests need it: the body decoded from JSON
 * or XML, the paths a mapping declares as known gaps removed from both sides, and arrays
 * compared without regard to order.
 */
export interface Answer {
  status: number;
  contentType: string;
  link: string | null;
  body: JsonValue;
}

/**
 * A Link header as clients use it: for each relation, the path and the decoded parameters
 * (as a sorted list), so two spellings of the same URL compare equal and a lost or changed
 * parameter does not.
 */
export function semanticLink(header: string | null, origin: string): string | null {
  if (header === null) return null;
  const entries = header.split(', ').map((entry) => {
    const match = /^<([^>]*)>; rel="([a-z]+)"$/.exec(entry);
    if (!match) return `unparsable: ${entry}`;
    const url = new URL(match[1] ?? '');
    const params = [...url.searchParams].map(([k, v]) => `${k}=${v}`).sort();
    return `${match[2]} ${url.origin === origin ? 'ORIGIN' : url.origin}${url.pathname} ${JSON.stringify(params)}`;
  });
  return entries.join(' | ');
}

export async function readAnswer(response: Response, origin: string): Promise<Answer> {
  const text = await response.text();
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0] ?? '';
  const body = contentType === 'application/xml' ? decodeRailsXml(text).value : (JSON.parse(text) as JsonValue);
  return { status: response.status, contentType, link: semanticLink(response.headers.get('link'), origin), body };
}

function removePath(value: JsonValue, steps: string[]): void {
  const [step, ...rest] = steps;
  if (step === undefined || value === null || typeof value !== 'object') return;
  const isArrayStep = step.endsWith('[]');
  const key = isArrayStep ? step.slice(0, -2) : step;
  if (Array.isArray(value)) return;
  if (!(key in value)) return;
  if (rest.length === 0 && !isArrayStep) {
    delete value[key];
    return;
  }
  const child = value[key] as JsonValue;
  const targets = isArrayStep && Array.isArray(child) ? child : [child];
  for (const target of targets) removePath(target, rest);
}

export function withoutGaps(body: JsonValue, gaps: readonly KnownGap[]): JsonValue {
  const copy = structuredClone(body);
  for (const gap of gaps) if (gap.path) removePath(copy, gap.path.split('.'));
  return copy;
}

/** Sorts every array by the canonical text of its items, recursively. */
export function canonical(value: JsonValue): JsonValue {
  if (Array.isArray(value)) {
    return value.map(canonical).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical(value[k] as JsonValue)]));
  }
  return value;
}
