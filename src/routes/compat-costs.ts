import { methodsOf, type Mapping } from './mapping.ts';

/**
 * The NerdGraph cost of every v2 route: NerdGraph calls and NRQL queries per
 * v2 call, cold (a fresh gateway: every cache empty) and warm (the same call again on that
 * gateway), and for a list, what reading every page costs (another fresh gateway following the
 * `Link` header's next page to the end). The gateway and the counting NerdGraph are given
 * (`CostSubject`): `npm run compat` measures on the sandbox (scripts/compat-costs.ts), which
 * counts what it answered (sandbox/read-counts.ts). Passthrough and unsupported routes send
 * nothing to NerdGraph by construction: their rows are 0, not measured.
 *
 * A fresh gateway also verifies the caller's key on its first request (KEY_VERIFICATION): one
 * call per key and gateway while the accounts cache keeps it (ACCOUNTS_CACHE_TTL_MS), whatever
 * the route. It is counted apart (`keyVerifications`), so a row is what the page itself costs.
 */
export interface CostRequest {
  method: string;
  /** Path and query. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** What one route is measured with. A write's warm call is another write (another name or target): the same one again is no longer the same call. */
export interface CostSample {
  cold: CostRequest;
  /** Default: `cold` again. */
  warm?: CostRequest;
  /** A list: the first page of a walk through every page (the cold request, or the whole list where the sample filters it). */
  walk?: CostRequest;
}

export interface Counted {
  calls: number;
  nrql: number;
}

export interface RouteCost {
  /** `GET, POST /v2/...`, as the route table writes it. */
  route: string;
  kind: Mapping['kind'];
  cold: Counted;
  warm: Counted;
  /** A full walk: its calls and NRQL queries over `pages` pages; absent for a route that is not a list. */
  walk?: Counted & { pages: number };
  /** NerdGraph calls of the cold request by operation, for the reader who wants to know which. */
  coldOperations: Record<string, number>;
  /** Key verifications (KEY_VERIFICATION calls) of the cold request, the warm one and the walk: not in the counts above. */
  keyVerifications: { cold: number; warm: number; walk: number };
}

/** The operation that verifies a key and finds its accounts (src/caller/accounts.ts). */
export const KEY_VERIFICATION = 'AccessibleAccounts';

/** A gateway with its own, empty caches, answering one v2 request at a time. */
export type CostGateway = (request: CostRequest) => Promise<Response>;

export interface CostSubject {
  freshGateway(): Promise<CostGateway & { close?: () => Promise<void> }>;
  /** What NerdGraph answered since the last reset: calls and NRQL queries, calls by operation. */
  counted(): Counted & { operations: Record<string, number> };
  reset(): void;
}

/** A walk that does not end within this many pages is a bug in the route (or the sample), not a cost. */
export const MAX_WALK_PAGES = 200;

const NEXT_LINK = /<([^>]*)>;\s*rel="next"/;

/** The path and query of the `Link` header's next page, if any. */
export function nextPagePath(link: string | null): string | undefined {
  const url = link === null ? undefined : NEXT_LINK.exec(link)?.[1];
  if (url === undefined) return undefined;
  const parsed = new URL(url, 'http://gateway.invalid');
  return `${parsed.pathname}${parsed.search}`;
}

export const routeLabel = (mapping: Mapping): string => `${methodsOf(mapping).join(', ')} ${mapping.route}`;

/** Sends one request, refusing to count an error answer as a route's cost. */
async function answered(gateway: CostGateway, request: CostRequest, route: string): Promise<Response> {
  const response = await gateway(request);
  if (response.status >= 300) {
    const text = (await response.text()).slice(0, 300);
    throw new Error(`cost sample of ${route} answered ${response.status} (${request.method} ${request.path}): ${text}`);
  }
  return response;
}

/** What `send` cost, the key verification apart. */
async function counting(subject: CostSubject, send: () => Promise<unknown>): Promise<{ counted: Counted; operations: Record<string, number>; keyVerifications: number }> {
  subject.reset();
  await send();
  const { calls, nrql, operations } = subject.counted();
  const { [KEY_VERIFICATION]: keyVerifications = 0, ...pageOperations } = operations;
  return { counted: { calls: calls - keyVerifications, nrql }, operations: pageOperations, keyVerifications };
}

/** Measures one translated route: cold and warm on one fresh gateway, then, for a list, a walk on another. */
export async function measureRoute(mapping: Mapping, sample: CostSample, subject: CostSubject): Promise<RouteCost> {
  const route = routeLabel(mapping);
  const gateway = await subject.freshGateway();
  let cold;
  let warm;
  try {
    cold = await counting(subject, async () => (await answered(gateway, sample.cold, route)).arrayBuffer());
    warm = await counting(subject, async () => (await answered(gateway, sample.warm ?? sample.cold, route)).arrayBuffer());
  } finally {
    await gateway.close?.();
  }
  const walk = sample.walk ? await walkAll(sample.walk, subject, route) : undefined;
  return {
    route,
    kind: mapping.kind,
    cold: cold.counted,
    warm: warm.counted,
    ...(walk && { walk: { ...walk.counted, pages: walk.pages } }),
    coldOperations: cold.operations,
    keyVerifications: { cold: cold.keyVerifications, warm: warm.keyVerifications, walk: walk?.keyVerifications ?? 0 },
  };
}

async function walkAll(first: CostRequest, subject: CostSubject, route: string): Promise<{ counted: Counted; keyVerifications: number; pages: number }> {
  const gateway = await subject.freshGateway();
  let pages = 0;
  try {
    const { counted, keyVerifications } = await counting(subject, async () => {
      let request: CostRequest | undefined = first;
      while (request !== undefined) {
        if (++pages > MAX_WALK_PAGES) throw new Error(`${route}: more than ${MAX_WALK_PAGES} pages`);
        const response = await answered(gateway, request, route);
        await response.arrayBuffer();
        const next = nextPagePath(response.headers.get('link'));
        request = next === undefined ? undefined : { ...request, path: next };
      }
    });
    return { counted, keyVerifications, pages };
  } finally {
    await gateway.close?.();
  }
}

/** A route that sends nothing to NerdGraph: passthrough (the legacy API answers) and unsupported (a fixed v2 error). */
export const sendsNothing = (mapping: Mapping): boolean => mapping.kind === 'passthrough' || mapping.kind === 'unsupported';

export function nothingSent(mapping: Mapping): RouteCost {
  const none = { calls: 0, nrql: 0 };
  return { route: routeLabel(mapping), kind: mapping.kind, cold: none, warm: none, coldOperations: {}, keyVerifications: { cold: 0, warm: 0, walk: 0 } };
}

const counted = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;
const walkCell = (walk: RouteCost['walk']): string => (walk === undefined ? '' : `${counted(walk.calls, 'call', 'calls')}, ${walk.nrql} NRQL, ${counted(walk.pages, 'page', 'pages')}`);
const operationsCell = (operations: Record<string, number>): string =>
  Object.entries(operations)
    .map(([operation, calls]) => (calls === 1 ? operation : `${operation} ×${calls}`))
    .join(', ');

/**
 * The cost table docs/compatibility.md embeds between its `costs:start` and `costs:end` markers:
 * a row per translated route, and one for the routes that send nothing.
 */
export function costTable(costs: readonly RouteCost[]): string {
  const sent = costs.filter((c) => c.kind !== 'passthrough' && c.kind !== 'unsupported');
  const rows = sent.map(
    (c) => `| \`${c.route}\` | ${c.kind} | ${c.cold.calls} | ${c.cold.nrql} | ${c.warm.calls} | ${c.warm.nrql} | ${walkCell(c.walk)} | ${operationsCell(c.coldOperations)} |`,
  );
  const passthrough = costs.filter((c) => c.kind === 'passthrough').length;
  const unsupported = costs.filter((c) => c.kind === 'unsupported').length;
  if (passthrough + unsupported > 0) rows.push(`| every other route (${passthrough} passthrough, ${unsupported} unsupported) | none sent | 0 | 0 | 0 | 0 |  |  |`);
  return ['| v2 route | kind | cold calls | cold NRQL | warm calls | warm NRQL | full walk | cold calls by operation |', '|---|---|---:|---:|---:|---:|---|---|', ...rows].join('\n');
}
