/**
 * `node bench/validator-floor.ts`: what validating the list's NerdGraph answers costs, zod
 * against a compiled check of the same rules. The answers are the ones the gateway receives for
 * the first request of the bench's distinct "applications list" row (`filter[ids]` of 200 ids,
 * bench/distinct.ts): an in-process sandbox the size of the bench's (12,000 apps, seed 42) behind
 * a recording HTTP server, and the gateway built as `npm start` builds it (src/gateway.ts)
 * pointed at that server, asked that request once in process. Each answer is then timed, CPU µs
 * per call (least of several rounds, process.cpuUsage, as bench/json-floor.ts):
 *
 * - JSON.parse of the body alone;
 * - zod as the gateway: the list's schemas, called as the list's code calls them (per entity,
 *   twice on the search: readPageDetails' safeParse for the app ids, reshapeItem's parse);
 * - zod with each search entity parsed once (same schemas);
 * - zod with only the fields the list reads (its entity schema less applicationInstancesV2);
 * - a hand-written check of exactly the rules of "zod as the gateway" (same calls, no copy made);
 * - the check compiled from the zod schemas (src/upstream/compiled-check.ts), called as the
 *   gateway calls it now: parseAnswer, and checkedParse once per item (each search entity once).
 *
 * The gateway's own schemas are imported. The zod columns call zod as parseAnswer did before the
 * compiled check (zodParseAnswer below), so they still measure zod. Before timing, every variant
 * is run on the real answers and on each answer with one value replaced (wrong type, null,
 * missing, out of range) at one path of each shape it holds: all must agree with "zod as the
 * gateway" on what is refused and which items are dropped, or the run stops.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { createSandbox } from '../sandbox/server.ts';
import { buildGateway } from '../src/gateway.ts';
import { loadConfig } from '../src/ops/config.ts';
import { createLogger } from '../src/ops/logger.ts';
import { parseAnswer } from '../src/upstream/answer.ts';
import { checkedParse } from '../src/upstream/compiled-check.ts';
import { UpstreamError } from '../src/upstream/errors.ts';
import { deepFreeze } from '../src/upstream/micro-cache.ts';
import { SearchPage } from '../src/routes/search-pages.ts';
import { ApmEntity, BrowserApdexEntity, EndUserApdexRow } from '../mappings/applications/application.ts';
import { PageDetailsAnswer } from '../mappings/applications/list.ts';
import { Batches, ENTITIES_CALLS_PER_DOCUMENT } from '../mappings/common/guid-batches.ts';
import { ApmOutline } from '../mappings/common/entity-schemas.ts';
import { cpuRound } from './cpu-per-call.ts';
import { buildScenarios } from './scenarios.ts';
import { DEMO_KEY } from './request-parts.ts';

/** The bench's sandbox (bench/run.ts: SANDBOX_APM_APPS default, seed 42). */
const APM_APPS = 12_000;
/** CPU time one timed round aims at, and the rounds per figure (the least is kept). */
const ROUND_US = 150_000;
const ROUNDS = 5;

// ---------------------------------------------------------------------------------------------
// The answers, as the gateway receives them.

interface Recorded {
  operation: string;
  text: string;
}

async function recordListAnswers(): Promise<{ path: string; recorded: Recorded[] }> {
  const sandbox = createSandbox({ apmApps: APM_APPS });
  const recorded: Recorded[] = [];
  // Forwards each NerdGraph request to the sandbox's app and keeps the answer's text.
  const recorder = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
        const answer = await sandbox.app.fetch(new Request(`http://sandbox${req.url ?? '/'}`, { method: req.method ?? 'GET', headers, ...(body === '' ? {} : { body }) }));
        const text = await answer.text();
        const operation = body === '' ? '' : String((JSON.parse(body) as { operationName?: unknown }).operationName);
        recorded.push({ operation, text });
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(text);
      })().catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
    });
  });
  recorder.listen(0, '127.0.0.1');
  await once(recorder, 'listening');
  const port = (recorder.address() as AddressInfo).port;
  const gateway = await buildGateway(loadConfig({ NERDGRAPH_URL: `http://127.0.0.1:${port}/graphql`, LOG_LEVEL: 'silent' }), { logger: createLogger('silent') });
  const row = buildScenarios(APM_APPS).distinct.find((scenario) => scenario.name === 'applications list');
  if (row === undefined) throw new Error('bench/distinct.ts has no "applications list" row');
  const response = await gateway.app.request(row.path, { headers: { 'X-Api-Key': DEMO_KEY } });
  const listed = (await response.json()) as { applications?: unknown[] };
  await gateway.close();
  recorder.closeAllConnections();
  recorder.close();
  if (response.status !== 200 || listed.applications?.length !== 200) throw new Error(`the gateway answered ${response.status} with ${listed.applications?.length} applications`);
  return { path: row.path, recorded };
}

// ---------------------------------------------------------------------------------------------
// zod as the gateway called it before the compiled check: parseAnswer was safeParse, then a throw.

function zodParseAnswer<T>(schema: z.ZodType<T>, data: unknown, operation: string): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new UpstreamError('upstream_failure', `unexpected ${operation} answer`);
  return parsed.data;
}

// ---------------------------------------------------------------------------------------------
// What each variant decides: the answer refused (502), or per item whether the list keeps it.

/** '' when the answer is refused; else one letter per item check, in order (y kept, n dropped). */
type Outcome = string;

interface Variant {
  name: string;
  /** Validates `data` (a GraphQL answer's `data`) as the list does; returns the Outcome. */
  run(data: unknown): Outcome;
}

/** parseAnswer's refusal of the whole answer (a 502) as the Outcome ""; an item's is caught per item. */
function refused(run: () => Outcome): Outcome {
  try {
    return run();
  } catch {
    return '';
  }
}

// The search (ApplicationsSearch): fetchOne's parseAnswer(SearchPage), then, for each entity,
// readPageDetails' ApmEntity.safeParse (its app id) and reshapeItem's ApmEntity.parse (a throw
// drops the item). inAccount, a hand-written check, runs the same in every variant: left out.
const searchAsTheGateway = (entity: z.ZodType<{ applicationId: number }>, twice: boolean): Variant['run'] => (data) =>
  refused(() => {
    const entities = zodParseAnswer(SearchPage, data, 'ApplicationsSearch').actor.entitySearch.results?.entities ?? [];
    let out = '';
    for (const item of entities) {
      const first = entity.safeParse(item);
      let kept = first.success;
      if (twice) {
        try {
          entity.parse(item);
        } catch {
          kept = false;
        }
      }
      out += kept ? 'y' : 'n';
    }
    return out;
  });

// The details (ApplicationsPageDetails): readPageDetails' parseAnswer(PageDetailsAnswer),
// endUserApdexScores' EndUserApdexRow.safeParse per row (a bad row is skipped), entitiesByGuid's
// parseAnswer(Batches), then BrowserApdexEntity.safeParse per browser entity (a bad one is skipped).
const detailsAsTheGateway: Variant['run'] = (data) =>
  refused(() => {
    const answer = zodParseAnswer(PageDetailsAnswer, data, 'ApplicationsPageDetails').actor;
    let out = '';
    for (const raw of answer.account?.endUser?.results ?? []) out += EndUserApdexRow.safeParse(raw).success ? 'y' : 'n';
    const actor = zodParseAnswer(Batches, data, 'ApplicationsPageDetails').actor;
    for (let call = 0; call < ENTITIES_CALLS_PER_DOCUMENT; call++) {
      for (const entity of actor[`b${call}`] ?? []) {
        if (entity === null) continue;
        out += BrowserApdexEntity.safeParse(entity).success ? 'y' : 'n';
      }
    }
    return out;
  });

// Only the fields the list reads: ApmEntity less applicationInstancesV2 (the show's; the search
// does not select it). guid and accountId stay: inAccount checks them too, so dropping them would
// save two of the twenty-odd checks per entity.
const ListApmEntity = ApmOutline.extend({
  settings: ApmEntity.shape.settings,
  apmSummary: ApmEntity.shape.apmSummary,
  apmBrowserSummary: ApmEntity.shape.apmBrowserSummary,
});

// ---------------------------------------------------------------------------------------------
// The hand-written check: the same rules as the zod schemas above, as zod 4 applies them
// (z.object: a non-null, non-array object, unknown keys ignored; z.number(): finite; .int():
// a safe integer; .nullable().optional(): null or missing too). It copies nothing: the list
// would read the answer itself.

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const orNone = (v: unknown, is: (v: unknown) => boolean): boolean => v === undefined || v === null || is(v);
const optNumber = (v: unknown): boolean => v === undefined || v === null || isNumber(v);
const optString = (v: unknown): boolean => v === undefined || v === null || typeof v === 'string';
const isArrayOf = (v: unknown, is: (item: unknown) => boolean): v is unknown[] => {
  if (!Array.isArray(v)) return false;
  for (const item of v) if (!is(item)) return false;
  return true;
};

function checkSearchPage(data: unknown): unknown[] | null {
  if (!isObject(data) || !isObject(data.actor)) return null;
  const search = data.actor.entitySearch;
  if (!isObject(search)) return null;
  const count = search.count;
  if (!(count === undefined || count === null || (isInt(count) && count >= 0))) return null;
  const results = search.results;
  if (results === null) return [];
  if (!isObject(results) || !optString(results.nextCursor)) return null;
  const entities = results.entities;
  if (entities === null) return [];
  return Array.isArray(entities) ? entities : null;
}

const isInstance = (v: unknown): boolean => {
  if (!isObject(v)) return false;
  const d = v.details;
  return isObject(d) && isString(d.id) && isString(d.host) && optString(d.instanceName) && optString(d.language) && optString(d.name);
};

function checkApmEntity(v: unknown): boolean {
  if (!isObject(v)) return false;
  if (!isString(v.guid) || !isInt(v.accountId) || !isString(v.name) || !orNone(v.reporting, (x) => typeof x === 'boolean') || !optString(v.alertSeverity)) return false;
  if (!isInt(v.applicationId) || !optString(v.language)) return false;
  const s = v.settings;
  if (!(s === undefined || s === null || (isObject(s) && optNumber(s.apdexTarget) && orNone(s.serverSideConfig, (x) => typeof x === 'boolean')))) return false;
  const m = v.apmSummary;
  if (
    !(
      m === undefined ||
      m === null ||
      (isObject(m) && optNumber(m.responseTimeAverage) && optNumber(m.throughput) && optNumber(m.errorRate) && optNumber(m.apdexScore) && optNumber(m.hostCount) && optNumber(m.instanceCount))
    )
  ) {
    return false;
  }
  const b = v.apmBrowserSummary;
  if (!(b === undefined || b === null || (isObject(b) && optNumber(b.pageLoadTimeAverage) && optNumber(b.pageLoadThroughput)))) return false;
  const i = v.applicationInstancesV2;
  return i === undefined || i === null || (isObject(i) && orNone(i.applicationInstances, (x) => isArrayOf(x, isInstance)) && optString(i.nextCursor));
}

const searchChecked: Variant['run'] = (data) => {
  const entities = checkSearchPage(data);
  if (entities === null) return '';
  let out = '';
  for (const item of entities) {
    const first = checkApmEntity(item);
    // reshapeItem's second look, as the gateway makes it.
    const second = checkApmEntity(item);
    out += first && second ? 'y' : 'n';
  }
  return out;
};

const isFacet = (v: unknown): boolean => isNumber(v) || isString(v);
const isFacetRow = (v: unknown): boolean =>
  isObject(v) && isFacet(v.facet) && orNone(v.hosts, (x) => isArrayOf(x, isString)) && orNone(v.instances, (x) => isArrayOf(x, isFacet));
const isEndUserApdexRow = (v: unknown): boolean => isObject(v) && orNone(v.facet, isFacet) && optNumber(v.eu_apdex_score);

function checkBrowserEntity(v: unknown): boolean {
  if (!isObject(v) || !isString(v.guid) || !isInt(v.accountId)) return false;
  if (!(v.applicationId === undefined || isInt(v.applicationId)) || !orNone(v.servingApmApplicationId, isInt)) return false;
  const s = v.settings;
  if (!(s === undefined || s === null || (isObject(s) && optNumber(s.apdexTarget)))) return false;
  const b = v.browserSettings;
  if (b === undefined || b === null) return true;
  if (!isObject(b)) return false;
  const m = b.browserMonitoring;
  return m === undefined || m === null || (isObject(m) && optString(m.loader));
}

const detailsChecked: Variant['run'] = (data) => {
  if (!isObject(data) || !isObject(data.actor)) return '';
  const actor = data.actor;
  const account = actor.account;
  // PageDetailsAnswer: account is required (null allowed); nrql optional; endUser nullable optional.
  if (account === undefined) return '';
  let endUserRows: unknown[] = [];
  if (account !== null) {
    if (!isObject(account)) return '';
    const nrql = account.nrql;
    if (nrql !== undefined && nrql !== null) {
      if (!isObject(nrql)) return '';
      if (nrql.results !== null) {
        if (!isArrayOf(nrql.results, isFacetRow)) return '';
      }
    }
    const endUser = account.endUser;
    if (endUser !== undefined && endUser !== null) {
      if (!isObject(endUser)) return '';
      if (endUser.results !== null) {
        if (!Array.isArray(endUser.results)) return '';
        endUserRows = endUser.results;
      }
    }
  }
  // Batches: b0..b7 each an array, null or missing.
  for (let call = 0; call < ENTITIES_CALLS_PER_DOCUMENT; call++) {
    const batch = actor[`b${call}`];
    if (!(batch === undefined || batch === null || Array.isArray(batch))) return '';
  }
  let out = '';
  for (const raw of endUserRows) out += isEndUserApdexRow(raw) ? 'y' : 'n';
  for (let call = 0; call < ENTITIES_CALLS_PER_DOCUMENT; call++) {
    for (const entity of (actor[`b${call}`] as unknown[] | null | undefined) ?? []) {
      if (entity === null) continue;
      out += checkBrowserEntity(entity) ? 'y' : 'n';
    }
  }
  return out;
};

// ---------------------------------------------------------------------------------------------
// The check compiled from the zod schemas, as the gateway calls it: parseAnswer (now through the
// compiled check), then checkedParse per item. The list parses each search entity once (its
// parsedApmEntity keeps the result per entity object, which would make every round after the
// first a lookup here): one checkedParse per entity.

const searchCompiled: Variant['run'] = (data) =>
  refused(() => {
    const entities = parseAnswer(SearchPage, data, 'ApplicationsSearch').actor.entitySearch.results?.entities ?? [];
    let out = '';
    for (const item of entities) out += checkedParse(ApmEntity, item).success ? 'y' : 'n';
    return out;
  });

const detailsCompiled: Variant['run'] = (data) =>
  refused(() => {
    const answer = parseAnswer(PageDetailsAnswer, data, 'ApplicationsPageDetails').actor;
    let out = '';
    for (const raw of answer.account?.endUser?.results ?? []) out += checkedParse(EndUserApdexRow, raw).success ? 'y' : 'n';
    const actor = parseAnswer(Batches, data, 'ApplicationsPageDetails').actor;
    for (let call = 0; call < ENTITIES_CALLS_PER_DOCUMENT; call++) {
      for (const entity of actor[`b${call}`] ?? []) {
        if (entity === null) continue;
        out += checkedParse(BrowserApdexEntity, entity).success ? 'y' : 'n';
      }
    }
    return out;
  });

// ---------------------------------------------------------------------------------------------
// Agreement: every variant decides as the gateway's zod on the answer and on one-value mutations.

const REPLACEMENTS: readonly unknown[] = [undefined, null, 'x', 0, -1, 1.5, 2 ** 53, true, {}, []];

/**
 * One path per shape of `value`: the first place each (path with array items as [], type) occurs,
 * so every field that is a number somewhere, and null somewhere else, is mutated both ways.
 */
function representativePaths(value: unknown): (string | number)[][] {
  const first = new Map<string, (string | number)[]>();
  const walk = (node: unknown, path: (string | number)[], shape: string): void => {
    const tag = node === null ? 'null' : Array.isArray(node) ? 'array' : typeof node;
    if (path.length > 0 && !first.has(`${shape}:${tag}`)) first.set(`${shape}:${tag}`, path);
    if (Array.isArray(node)) node.forEach((item, i) => walk(item, [...path, i], `${shape}[]`));
    else if (isObject(node)) for (const [key, item] of Object.entries(node)) walk(item, [...path, key], `${shape}.${key}`);
  };
  walk(value, [], '');
  return [...first.values()];
}

function agreement(data: unknown, reference: Variant, others: readonly Variant[]): { mutations: number; refusedOrDropped: number } {
  const whole = reference.run(data);
  if (whole === '' || whole.includes('n')) throw new Error(`${reference.name} does not accept the real answer whole: ${whole}`);
  let mutations = 0;
  let refusedOrDropped = 0;
  const compare = (where: string): void => {
    const expected = reference.run(data);
    if (expected !== whole) refusedOrDropped++;
    for (const other of others) {
      const got = other.run(data);
      if (got !== expected) throw new Error(`${other.name} disagrees with ${reference.name} at ${where}: ${got.slice(0, 40)} against ${expected.slice(0, 40)}`);
    }
  };
  compare('the answer');
  for (const path of representativePaths(data)) {
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Obj)[key as string], data) as Obj;
    const key = path[path.length - 1] as string;
    const original = parent[key];
    for (const replacement of REPLACEMENTS) {
      if (replacement === undefined && !Array.isArray(parent)) delete parent[key];
      else parent[key] = replacement;
      mutations++;
      compare(`${path.join('.')} = ${JSON.stringify(replacement) ?? 'missing'}`);
    }
    parent[key] = original;
  }
  return { mutations, refusedOrDropped };
}

// ---------------------------------------------------------------------------------------------
// Timing.

/** CPU µs per call of each op: rounds of about ROUND_US CPU, interleaved across ops, the least of ROUNDS kept. */
function cpuPerCall(ops: readonly (() => number)[]): number[] {
  const round = cpuRound;
  // Warm-up (zod compiles a schema on its first parse), then n sized to a round.
  const sizes = ops.map((op) => {
    round(op, 20);
    return Math.max(20, Math.round(ROUND_US / Math.max(round(op, 50), 0.5)));
  });
  const best = ops.map(() => Infinity);
  for (let r = 0; r < ROUNDS; r++) ops.forEach((op, i) => (best[i] = Math.min(best[i] as number, round(op, sizes[i] as number))));
  return best;
}

// ---------------------------------------------------------------------------------------------

const started = performance.now();
const { path, recorded } = await recordListAnswers();
const textOf = (operation: string): string => {
  const found = recorded.filter((r) => r.operation === operation);
  if (found.length !== 1) throw new Error(`expected one ${operation} answer, got ${found.length} (operations: ${recorded.map((r) => r.operation).join(', ')})`);
  return (found[0] as Recorded).text;
};

const answers = [
  {
    name: 'ApplicationsSearch',
    text: textOf('ApplicationsSearch'),
    variants: [
      { name: 'zod as the gateway', run: searchAsTheGateway(ApmEntity, true) },
      { name: 'zod, each entity once', run: searchAsTheGateway(ApmEntity, false) },
      { name: 'zod, fields read only', run: searchAsTheGateway(ListApmEntity, true) },
      { name: 'hand-written check', run: searchChecked },
      { name: 'check compiled from zod', run: searchCompiled },
    ],
  },
  {
    name: 'ApplicationsPageDetails',
    text: textOf('ApplicationsPageDetails'),
    // Each browser entity and row is parsed once, and every field its schemas hold is read: no other zod variant.
    variants: [
      { name: 'zod as the gateway', run: detailsAsTheGateway },
      { name: 'hand-written check', run: detailsChecked },
      { name: 'check compiled from zod', run: detailsCompiled },
    ],
  },
];

const agreed: string[] = [];
for (const answer of answers) {
  const [reference, ...others] = answer.variants as [Variant, ...Variant[]];
  const { mutations, refusedOrDropped } = agreement((JSON.parse(answer.text) as { data: unknown }).data, reference, others);
  agreed.push(`${answer.name}: ${mutations} one-value mutations, ${refusedOrDropped} of them refused or dropping an item, every variant agreeing`);
}
{
  // The search selects no applicationInstancesV2 (ApmEntity's, for the show): given one, the
  // checks that hold it must still agree ("fields read only" leaves it out on purpose).
  const data = (JSON.parse(textOf('ApplicationsSearch')) as { data: { actor: { entitySearch: { results: { entities: Obj[] } } } } }).data;
  const entity = data.actor.entitySearch.results.entities[0] as Obj;
  entity.applicationInstancesV2 = { applicationInstances: [{ details: { id: '300000001', host: 'h1', instanceName: 'h1:8080', language: 'java', name: 'n' } }], nextCursor: 'c' };
  const [reference, ...others] = (answers[0] as (typeof answers)[0]).variants.filter((variant) => variant.name !== 'zod, fields read only') as [Variant, ...Variant[]];
  const { mutations, refusedOrDropped } = agreement(data, reference, others);
  agreed.push(`ApplicationsSearch with an applicationInstancesV2 added: ${mutations} one-value mutations, ${refusedOrDropped} of them refused or dropping an item, every variant but "fields read only" agreeing`);
}

const zodVersion = (JSON.parse(readFileSync(fileURLToPath(new URL('../node_modules/zod/package.json', import.meta.url)), 'utf8')) as { version: string }).version;
console.log(`node ${process.version}, zod ${zodVersion}; GET ${path.split('=')[0]}=<200 ids> on the bench's sandbox (${APM_APPS} apps, seed 42)`);
console.log(`CPU µs per call, least of ${ROUNDS} interleaved rounds of about ${ROUND_US / 1000} ms; "-": not applicable (see below)`);
console.log('');
console.log('| answer | bytes | JSON.parse | zod as the gateway | zod, each entity once | zod, fields read only | hand-written check | check compiled from zod |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
const columns = ['zod as the gateway', 'zod, each entity once', 'zod, fields read only', 'hand-written check', 'check compiled from zod'];
const totals = new Array<number>(columns.length + 1).fill(0);
for (const answer of answers) {
  const data = (JSON.parse(answer.text) as { data: unknown }).data;
  // As the micro-cache hands answers to the mappings.
  if (data !== null && typeof data === 'object') deepFreeze(data);
  const ops = [() => (JSON.parse(answer.text) === null ? 0 : 1), ...answer.variants.map((variant) => () => variant.run(data).length)];
  const [parse, ...figures] = cpuPerCall(ops) as [number, ...number[]];
  const byName = new Map(answer.variants.map((variant, i) => [variant.name, figures[i] as number]));
  const cells = columns.map((name) => byName.get(name) ?? byName.get('zod as the gateway') ?? NaN);
  totals[0] = (totals[0] as number) + parse;
  cells.forEach((value, i) => (totals[i + 1] = (totals[i + 1] as number) + value));
  const shown = columns.map((name, i) => (byName.has(name) ? (cells[i] as number).toFixed(0) : '-'));
  console.log(`| ${answer.name} | ${Buffer.byteLength(answer.text)} | ${parse.toFixed(0)} | ${shown.join(' | ')} |`);
}
console.log(`| both (one list request) | | ${totals.map((value) => value.toFixed(0)).join(' | ')} |`);
console.log('');
console.log('"-" on ApplicationsPageDetails: each of its items is parsed once and its schemas hold only fields the list reads; the total counts "zod as the gateway" there.');
for (const line of agreed) console.log(line);
console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
