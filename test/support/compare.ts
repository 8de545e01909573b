import type { KnownGap } from '../../src/routes/mapping.ts';
import { httpSend } from './http.ts';
import type { JsonValue } from '../../src/v2/xml.ts';
import { decodeRailsXml } from './rails-xml.ts';
import { normaliseIds, resolveTokens, unresolveTokens, type IdPath, type SideIds } from './derived-ids.ts';

/**
 * Comparison of two v2 answers, as the differential tests need it: the body decoded from JSON
 * or XML, the paths a mapping declares as known gaps removed from both sides, and arrays
 * compared without regard to order. The suites themselves are built with differential.ts.
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

function decodeAnswer(response: Response, text: string, origin: string): Answer {
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0] ?? '';
  const body = contentType === 'application/xml' ? decodeRailsXml(text).value : (JSON.parse(text) as JsonValue);
  return { status: response.status, contentType, link: semanticLink(response.headers.get('link'), origin), body };
}

export async function readAnswer(response: Response, origin: string): Promise<Answer> {
  return decodeAnswer(response, await response.text(), origin);
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

/** One request of a differential corpus. */
export interface FaceRequest {
  name: string;
  path: string;
  method?: string;
  headers: Record<string, string>;
  /** A body (a form, JSON or XML), sent with the request (GET included, as curl -X GET -d does). */
  form?: string;
  /** The route's documented gaps: the body paths left out on both sides. */
  gaps: readonly KnownGap[];
  /** A documented Link gap: when the gateway sends no rel="last", the legacy one is not compared. */
  lastMayBeMissing?: boolean;
  /** Ids each side makes up (derived-ids.ts): tokens in the path and form resolved per side, ids at `paths` normalised in both answers. */
  derived?: { gateway: SideIds; legacy: SideIds; paths: readonly IdPath[] };
}

/** One face's answer to a request, its ids put back to tokens (derived-ids.ts), with the raw text and Allow. */
export interface FaceAnswer extends Answer {
  allow: string | null;
  /** The whole Content-Type header. */
  type: string | null;
  text: string;
}

/** Both faces' answers to one request. */
export interface AnswerPair {
  gateway: FaceAnswer;
  legacy: FaceAnswer;
}

/** Sends one request to the gateway and to the legacy face, over real HTTP, each with its own ids, and reads both answers. */
export async function exchange(gatewayUrl: string, legacyUrl: string, request: FaceRequest): Promise<AnswerPair> {
  const { derived } = request;
  const read = async (url: string, side: SideIds | undefined): Promise<FaceAnswer> => {
    const sent = (text: string): string => (side ? resolveTokens(text, side) : text);
    const response = await httpSend(`${url}${sent(request.path)}`, {
      headers: request.headers,
      method: request.method ?? 'GET',
      ...(request.form === undefined ? {} : { body: sent(request.form) }),
    });
    const text = await response.text();
    const answer = decodeAnswer(response, text, url);
    const normalised = derived && side ? { ...answer, link: unresolveTokens(answer.link, request.path, side), body: normaliseIds(answer.body, derived.paths, side) } : answer;
    return { ...normalised, allow: response.headers.get('allow'), type: response.headers.get('content-type'), text };
  };
  const gateway = await read(gatewayUrl, derived?.gateway);
  const legacy = await read(legacyUrl, derived?.legacy);
  return { gateway, legacy };
}

/** The semantic Link without its `last` entry (see lastMayBeMissing). */
const withoutLastEntry = (link: string | null): string | null => {
  const kept = (link ?? '').split(' | ').filter((entry) => entry !== '' && !entry.startsWith('last '));
  return kept.length > 0 ? kept.join(' | ') : null;
};

/** How a mismatch reads: the request, where the answers first part, and both as compared. */
export function describeMismatch(request: Pick<FaceRequest, 'name' | 'path' | 'method' | 'form'>, where: string, gateway: string, legacy: string, detail: number): string {
  const form = request.form === undefined ? '' : ` body ${request.form.slice(0, 120)}`;
  return `${request.name} ${request.method ?? 'GET'} ${request.path.slice(0, 200)}${form}\n  differs at ${where}\n  gateway: ${gateway.slice(0, detail)}\n  legacy:  ${legacy.slice(0, detail)}`;
}

/** What two answers are compared on, exactly: status, content type, Allow, Link and the body without gaps, arrays in any order. */
function exactView(answer: FaceAnswer, gaps: readonly KnownGap[]): JsonValue {
  return { status: answer.status, contentType: answer.contentType, link: answer.link, allow: answer.allow, body: canonical(withoutGaps(answer.body, gaps)) };
}

/** undefined when both answers are alike (see exactView); else a readable mismatch. */
export function exactMismatch(pair: AnswerPair, request: FaceRequest, detail = 600): string | undefined {
  const gatewayHasLast = (pair.gateway.link ?? '').split(' | ').some((entry) => entry.startsWith('last '));
  const legacy = request.lastMayBeMissing && !gatewayHasLast ? { ...pair.legacy, link: withoutLastEntry(pair.legacy.link) } : pair.legacy;
  const [left, right] = [exactView(pair.gateway, request.gaps), exactView(legacy, request.gaps)];
  if (JSON.stringify(left) === JSON.stringify(right)) return undefined;
  const where = numericDifference(left, right, 0) ?? '(key order)';
  return describeMismatch(request, where, JSON.stringify(left), JSON.stringify(right), detail);
}

export interface FaceComparison {
  /** The legacy face's status (what v2 answered). */
  status: number;
  /** The legacy answer as compared (gaps removed, arrays sorted), for corpus coverage checks. */
  legacyText: string;
  /** undefined when both faces answered alike: status, content type, Allow, Link and body. */
  mismatch: string | undefined;
}

/** Sends one request to the gateway and to the legacy face, over real HTTP, and compares the answers exactly. */
export async function compareFaces(gatewayUrl: string, legacyUrl: string, request: FaceRequest, detail = 600): Promise<FaceComparison> {
  const pair = await exchange(gatewayUrl, legacyUrl, request);
  return { status: pair.legacy.status, legacyText: JSON.stringify(exactView(pair.legacy, request.gaps)), mismatch: exactMismatch(pair, request, detail) };
}

/**
 * The first difference between two answers whose numbers may differ in their last bits (metric
 * values computed by NRQL on one side and by the REST rules on the other): status, content
 * type, Link, then the bodies, as `bodyOf` prepares them (e.g. gaps removed), numbers compared
 * within `tolerance` (relative), object keys in order.
 */
export function answerDifference(gateway: Answer, legacy: Answer, tolerance: number, bodyOf: (body: JsonValue) => JsonValue = (body) => body): string | undefined {
  if (gateway.status !== legacy.status) return `status ${gateway.status} != ${legacy.status}`;
  if (gateway.contentType !== legacy.contentType) return `content type ${gateway.contentType} != ${legacy.contentType}`;
  if (gateway.link !== legacy.link) return `link ${gateway.link} != ${legacy.link}`;
  return numericDifference(bodyOf(gateway.body), bodyOf(legacy.body), tolerance);
}

/** The first place two values differ (`path: left != right`), numbers within `tolerance` (relative), object keys in order. */
export function numericDifference(left: JsonValue, right: JsonValue, tolerance: number, path = ''): string | undefined {
  if (typeof left === 'number' && typeof right === 'number') {
    const scale = Math.max(Math.abs(left), Math.abs(right), 1e-9);
    return Math.abs(left - right) / scale <= tolerance ? undefined : `${path}: ${left} != ${right}`;
  }
  if (Array.isArray(left) && Array.isArray(right)) {
    if (left.length !== right.length) return `${path}: ${left.length} items != ${right.length}`;
    for (let i = 0; i < left.length; i++) {
      const found = numericDifference(left[i] as JsonValue, right[i] as JsonValue, tolerance, `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (left !== null && right !== null && typeof left === 'object' && typeof right === 'object' && !Array.isArray(left) && !Array.isArray(right)) {
    // Key order matters too: values keep the request's order (or the value set's).
    const keys = (value: object): string => JSON.stringify(Object.keys(value));
    if (keys(left) !== keys(right)) return `${path}: keys ${keys(left)} != ${keys(right)}`;
    for (const key of Object.keys(left)) {
      const found = numericDifference(left[key] as JsonValue, right[key] as JsonValue, tolerance, path === '' ? key : `${path}.${key}`);
      if (found) return found;
    }
    return undefined;
  }
  return JSON.stringify(left) === JSON.stringify(right) ? undefined : `${path}: ${JSON.stringify(left)} != ${JSON.stringify(right)}`;
}
