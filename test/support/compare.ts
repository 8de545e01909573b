import type { KnownGap } from '../../src/routes/mapping.ts';
import { httpSend } from './http.ts';
import type { JsonValue } from '../../src/v2/xml.ts';
import { decodeRailsXml } from './rails-xml.ts';
import { normaliseIds, resolveTokens, unresolveTokens, type IdPath, type SideIds } from './derived-ids.ts';

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

/** One request of a differential corpus. */
export interface FaceRequest {
  name: string;
  path: string;
  method?: string;
  headers: Record<string, string>;
  /** A form body, sent with the request (GET included, as curl -X GET -d does). */
  form?: string;
  /** The route's documented gaps: the body paths left out on both sides. */
  gaps: readonly KnownGap[];
  /** A documented Link gap: when the gateway sends no rel="last", the legacy one is not compared. */
  lastMayBeMissing?: boolean;
  /** Ids each side makes up (derived-ids.ts): tokens in the path and form resolved per side, ids at `paths` normalised in both answers. */
  derived?: { gateway: SideIds; legacy: SideIds; paths: readonly IdPath[] };
}

/** The semantic Link without its `last` entry (see lastMayBeMissing). */
const withoutLastEntry = (link: string | null): string | null => {
  const kept = (link ?? '').split(' | ').filter((entry) => entry !== '' && !entry.startsWith('last '));
  return kept.length > 0 ? kept.join(' | ') : null;
};

export interface FaceComparison {
  /** The legacy face's status (what v2 answered). */
  status: number;
  /** The legacy answer as compared (gaps removed, arrays sorted), for corpus coverage checks. */
  legacyText: string;
  /** undefined when both faces answered alike: status, content type, Allow, Link and body. */
  mismatch: string | undefined;
}

/** Sends one request to the gateway and to the legacy face, over real HTTP, and compares the answers. */
export async function compareFaces(gatewayUrl: string, legacyUrl: string, request: FaceRequest, detail = 600): Promise<FaceComparison> {
  const { derived } = request;
  const sent = (text: string, side: SideIds | undefined): string => (side ? resolveTokens(text, side) : text);
  const init = (side: SideIds | undefined) => ({
    headers: request.headers,
    method: request.method ?? 'GET',
    ...(request.form === undefined ? {} : { body: sent(request.form, side) }),
  });
  const gatewayResponse = await httpSend(`${gatewayUrl}${sent(request.path, derived?.gateway)}`, init(derived?.gateway));
  const legacyResponse = await httpSend(`${legacyUrl}${sent(request.path, derived?.legacy)}`, init(derived?.legacy));
  const allow = [gatewayResponse.headers.get('allow'), legacyResponse.headers.get('allow')];
  const normalised = (answer: Answer, side: SideIds | undefined): Answer =>
    derived && side ? { ...answer, link: unresolveTokens(answer.link, request.path, side), body: normaliseIds(answer.body, derived.paths, side) } : answer;
  const viaGateway = normalised(await readAnswer(gatewayResponse, gatewayUrl), derived?.gateway);
  const answered = normalised(await readAnswer(legacyResponse, legacyUrl), derived?.legacy);
  const gatewayHasLast = (viaGateway.link ?? '').split(' | ').some((entry) => entry.startsWith('last '));
  const viaLegacy = request.lastMayBeMissing && !gatewayHasLast ? { ...answered, link: withoutLastEntry(answered.link) } : answered;
  const left = JSON.stringify({ ...viaGateway, allow: allow[0], body: canonical(withoutGaps(viaGateway.body, request.gaps)) });
  const right = JSON.stringify({ ...viaLegacy, allow: allow[1], body: canonical(withoutGaps(viaLegacy.body, request.gaps)) });
  return {
    status: viaLegacy.status,
    legacyText: right,
    mismatch: left === right ? undefined : `${request.name} ${request.method ?? 'GET'} ${request.path}\n  gateway: ${left.slice(0, detail)}\n  legacy:  ${right.slice(0, detail)}`,
  };
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

function numericDifference(left: JsonValue, right: JsonValue, tolerance: number, path = ''): string | undefined {
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
      const found = numericDifference(left[key] as JsonValue, right[key] as JsonValue, tolerance, `${path}.${key}`);
      if (found) return found;
    }
    return undefined;
  }
  return JSON.stringify(left) === JSON.stringify(right) ? undefined : `${path}: ${JSON.stringify(left)} != ${JSON.stringify(right)}`;
}

/**
 * A listing read page by page from both faces where each side orders by ids of its own
 * (derived-ids.ts): which record lands on which page differs, so each page is compared by
 * status, content type, Link and size, and the records of all pages together as one set.
 */
export async function compareListing(gatewayUrl: string, legacyUrl: string, pages: readonly FaceRequest[], listKey: string): Promise<FaceComparison> {
  const problems: string[] = [];
  const records = { gateway: [] as string[], legacy: [] as string[] };
  let status = 0;
  for (const request of pages) {
    const { derived } = request;
    const read = async (url: string, side: SideIds | undefined) => {
      const path = side ? resolveTokens(request.path, side) : request.path;
      const answer = await readAnswer(await httpSend(`${url}${path}`, { headers: request.headers, method: request.method ?? 'GET' }), url);
      const body = withoutGaps(derived && side ? normaliseIds(answer.body, derived.paths, side) : answer.body, request.gaps);
      const list = body !== null && typeof body === 'object' && !Array.isArray(body) ? body[listKey] : undefined;
      const items = Array.isArray(list) ? list.map((item) => JSON.stringify(canonical(item))) : [];
      const link = side ? unresolveTokens(answer.link, request.path, side) : answer.link;
      return { meta: JSON.stringify({ status: answer.status, contentType: answer.contentType, link, size: items.length, body: Array.isArray(list) ? null : canonical(body) }), items, status: answer.status };
    };
    const left = await read(gatewayUrl, derived?.gateway);
    const right = await read(legacyUrl, derived?.legacy);
    status = right.status;
    if (left.meta !== right.meta) problems.push(`${request.name} ${request.path}: ${left.meta.slice(0, 300)} != ${right.meta.slice(0, 300)}`);
    records.gateway.push(...left.items);
    records.legacy.push(...right.items);
  }
  const [l, r] = [records.gateway.sort(), records.legacy.sort()];
  if (JSON.stringify(l) !== JSON.stringify(r)) problems.push(`listing ${pages[0]?.name}: the ${listKey} of its ${pages.length} pages differ (${l.length} and ${r.length} records)`);
  return { status, legacyText: JSON.stringify(r), mismatch: problems.length === 0 ? undefined : problems.join('\n') };
}
