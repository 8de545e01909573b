import type { Hono } from 'hono';
import { Kind, parse, type TypeNode } from 'graphql';
import { z } from 'zod';
import { isLoopbackHost } from './access.ts';
import type { AccountResolver } from '../caller/accounts.ts';
import { callerFrom, type Caller, type IdentityOf } from '../caller/identity.ts';
import { redactKeys } from '../caller/redact.ts';
import { markInternal } from '../modes/internal.ts';
import type { GatewayEnv } from '../routes/context.ts';
import { methodsOf, type FieldNote, type KnownGap, type Mapping, type ParameterNote } from '../routes/mapping.ts';
import type { NerdGraph } from '../upstream/client.ts';
import { loadDocuments, type OperationDocuments } from '../upstream/documents.ts';
import { runRecorded } from '../upstream/recorded-run.ts';
import { createRecordingClient, type RecordedCall } from '../upstream/recording-client.ts';
import { V2Error, notFound } from '../v2/errors.ts';
import { createRouteTable, type RouteTable } from '../v2/route-table.ts';

/**
 * `GET /bridge/explain?request=<v2 path and query>`: what NerdGraph calls one legacy call
 * becomes, for the caller's own requests (the migration guide). The caller's key is verified
 * first, as for any v2 call (refused-key memory, per-address limit, the accounts lookup), and
 * nothing is allocated for a caller that fails it. Then the request runs through the gateway's
 * own app as a recorded run (src/upstream/recorded-run.ts): a NerdGraph client of its own
 * records every call; queries really run (the translation needs their answers: GUIDs, metric
 * names), mutations are recorded and never sent; the route caches are bypassed, so every call
 * a cold gateway makes shows. The answer holds each call's exact document, variables and NRQL,
 * a body that can be POSTed to /graphql as it is, a curl command without the key, and the
 * mapping's notes.
 */

/** Shown when the deps do not say which NerdGraph the gateway posts to. */
export const DEFAULT_GRAPHQL_URL = 'https://api.newrelic.com/graphql';
/** The note an explanation carries when its calls go to a NerdGraph on this host. */
export const LOCAL_GRAPHQL_NOTE =
  'graphqlUrl is on this host: the local sandbox (or a proxy here) the gateway calls, not New Relic. Its curl commands run only here; for your account, POST the same bodies to https://api.newrelic.com/graphql (or https://api.eu.newrelic.com/graphql).';

/**
 * The NerdGraph URL as an answer may show it: without user:password, query or fragment (where
 * a proxy's credentials would sit). A loopback one (the embedded sandbox) is kept, flagged
 * `local`: it is the only URL its calls run on. One that does not parse is not shown at all.
 */
export function shownGraphqlUrl(configured: string | undefined): { url: string; local: boolean } {
  let url: URL;
  try {
    url = new URL(configured ?? DEFAULT_GRAPHQL_URL);
  } catch {
    return { url: DEFAULT_GRAPHQL_URL, local: false };
  }
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  return { url: url.href, local: isLoopbackHost(url.host) };
}

/** Long enough for a metric-data request naming 100 metrics; a URL is bounded below that anyway. */
export const MAX_REQUEST_CHARS = 8192;
export const MAX_BODY_CHARS = 16_384;

const METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
type ExplainMethod = (typeof METHODS)[number];

/** One NerdGraph call the translation made (a query) or would have made (a mutation). */
export interface ExplainedCall {
  operation: string;
  kind: 'query' | 'mutation';
  /** The exact GraphQL document, fragments included. */
  query: string;
  variables: Record<string, unknown>;
  /** The NRQL the variables carry (the document's `Nrql` variables), in variable order. */
  nrql: string[];
  /** False for a mutation: recorded, never sent. */
  sent: boolean;
  /** The JSON body to POST to /graphql as it is. */
  graphqlRequest: { query: string; operationName: string; variables: Record<string, unknown> };
  /** A runnable command; the key comes from $NEW_RELIC_API_KEY. */
  curl: string;
  /** Why the gateway makes this call, when it is not part of the route's translation itself. */
  note?: string;
}

export interface Explanation {
  /** Path and query as asked (key-shaped text masked). */
  request: string;
  method: ExplainMethod;
  /** The v2 route template, e.g. `/v2/applications/{id}.{format}`. */
  route: string;
  /** The mapping's id, e.g. `applications.show`. */
  mapping: string;
  /** The mapping's kind; `passthrough` routes make no NerdGraph call. */
  kind: string;
  fidelity: string;
  summary: string;
  /** Where the calls go: the gateway's configured NerdGraph endpoint, without credentials or query (shownGraphqlUrl). */
  graphqlUrl: string;
  calls: ExplainedCall[];
  /** How each v2 field is built (the mapping's field notes). */
  reshape: readonly FieldNote[];
  knownGaps: readonly KnownGap[];
  assumptions: readonly string[];
  parameters: readonly ParameterNote[];
  /** The status the translation answered (null when nothing ran: passthrough). */
  status: number | null;
  /** The error title the translation answered with, when it answered one. */
  error?: string;
  /** What the reader should know about this run (dry-run writes, passthrough, unsupported). */
  notes: string[];
}

// ---- input ---------------------------------------------------------------------------------

/** Control characters and a fragment have no place in a request line. */
const isRequestText = (text: string): boolean => ![...text].some((ch) => ch === '#' || ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
const V2_TARGET = /^(?:\/v2\/|\/deployments\.(?:json|xml)(?:\?|$))/;

const ExplainQuery = z.object({
  request: z
    .string({ error: 'Invalid parameter request: give a v2 path and query, e.g. request=/v2/applications.json' })
    .min(1, 'Invalid parameter request: give a v2 path and query, e.g. request=/v2/applications.json')
    .max(MAX_REQUEST_CHARS, `Invalid parameter request: at most ${MAX_REQUEST_CHARS} characters`)
    .refine(isRequestText, 'Invalid parameter request: control characters and # are not accepted')
    .regex(V2_TARGET, 'Invalid parameter request: must start with /v2/ (or be /deployments.json or /deployments.xml)'),
  method: z
    .string()
    .transform((m) => m.trim().toUpperCase())
    .pipe(z.enum(METHODS, { error: 'Invalid parameter method: expected GET, POST, PUT or DELETE' }))
    .default('GET'),
  body: z.string().max(MAX_BODY_CHARS, `Invalid parameter body: at most ${MAX_BODY_CHARS} characters`).optional(),
});

export type ExplainInput = z.output<typeof ExplainQuery>;

function single(values: string[] | undefined, name: string): string | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > 1) throw new V2Error(422, `Invalid parameter ${name}: give it once`, { kind: 'invalid_parameter' });
  return values[0];
}

/** The explain parameters, validated; V2Error 422/400 on bad input. */
export function parseExplainQuery(query: Record<string, string[]>): ExplainInput {
  const result = ExplainQuery.safeParse({
    request: single(query.request, 'request'),
    method: single(query.method, 'method'),
    body: single(query.body, 'body'),
  });
  if (!result.success) {
    throw new V2Error(422, result.error.issues[0]?.message ?? 'Invalid parameters', { kind: 'invalid_parameter' });
  }
  const input = result.data;
  if (input.body !== undefined) {
    if (input.method !== 'POST' && input.method !== 'PUT') {
      throw new V2Error(422, 'Invalid parameter body: only a POST or PUT request has a body', { kind: 'invalid_parameter' });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.body);
    } catch {
      throw new V2Error(400, 'Invalid parameter body: expected JSON text', { kind: 'invalid_parameter' });
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new V2Error(422, 'Invalid parameter body: expected a JSON object such as {"deployment":{"revision":"v1"}}', { kind: 'invalid_parameter' });
    }
  }
  return input;
}

// ---- calls ---------------------------------------------------------------------------------

const namedType = (type: TypeNode): string => (type.kind === Kind.NAMED_TYPE ? type.name.value : namedType(type.type));

/** Per document: the names of its variables of type Nrql (or lists of it), in declaration order. */
const nrqlVariableCache = new Map<string, string[]>();
function nrqlVariablesOf(document: string): string[] {
  let names = nrqlVariableCache.get(document);
  if (names === undefined) {
    names = parse(document).definitions.flatMap((definition) =>
      definition.kind === Kind.OPERATION_DEFINITION
        ? (definition.variableDefinitions ?? []).filter((v) => namedType(v.type) === 'Nrql').map((v) => v.variable.name.value)
        : [],
    );
    nrqlVariableCache.set(document, names);
  }
  return names;
}

function nrqlOf(call: RecordedCall): string[] {
  return nrqlVariablesOf(call.query).flatMap((name) => {
    const value = call.variables[name];
    return [value].flat().filter((v): v is string => typeof v === 'string');
  });
}

/** POSIX shell single quotes: only `'` itself needs care. */
const shellQuote = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

export function curlFor(graphqlUrl: string, body: string): string {
  return [
    `curl -sS -X POST ${shellQuote(graphqlUrl)}`,
    `-H 'Content-Type: application/json'`,
    `-H "API-Key: $NEW_RELIC_API_KEY"`,
    `--data-binary ${shellQuote(body)}`,
  ].join(' ');
}

const ACCOUNTS_OPERATION = 'AccessibleAccounts';

const CALL_NOTES: Readonly<Record<string, string>> = {
  [ACCOUNTS_OPERATION]:
    'How the gateway finds the account to use (v2 inferred it from the key; NerdGraph does not): a migrated script can use its account id directly.',
};

function explainCall(call: RecordedCall, graphqlUrl: string): ExplainedCall {
  const graphqlRequest = { query: call.query, operationName: call.operation, variables: call.variables };
  const note = CALL_NOTES[call.operation];
  return {
    operation: call.operation,
    kind: call.kind,
    query: call.query,
    variables: call.variables,
    nrql: nrqlOf(call),
    sent: call.sent,
    graphqlRequest,
    curl: curlFor(graphqlUrl, JSON.stringify(graphqlRequest)),
    ...(note ? { note } : {}),
  };
}

// ---- the translation run -------------------------------------------------------------------

const ErrorBody = z.object({ error: z.object({ title: z.string() }) });
const XML_TITLE = /<title>([^<]*)<\/title>/;
const XML_ENTITIES: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'" };

/** The v2 error title of an answer (JSON or XML), if it is one. */
function errorTitleOf(text: string): string | undefined {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data.error.title;
  } catch {
    // Not JSON: the XML form.
  }
  return XML_TITLE.exec(text)?.[1]?.replace(/&(?:amp|lt|gt|quot|apos);/g, (entity) => XML_ENTITIES[entity] ?? entity);
}

/** The headers of the caller's request the translation reads: its key, its account, the body type. */
function forwardedHeaders(headers: Headers, hasBody: boolean): Headers {
  const forwarded = new Headers();
  for (const name of ['x-api-key', 'api-key', 'x-account-id']) {
    const value = headers.get(name);
    if (value !== null) forwarded.set(name, value);
  }
  if (hasBody) forwarded.set('content-type', 'application/json');
  return forwarded;
}

/** What explain needs from the app it is mounted on (src/app.ts). */
export interface ExplainDeps {
  mappings: readonly Mapping[];
  /** The real NerdGraph client: a run's recorder sends its queries there. */
  nerdgraph: NerdGraph;
  /** The NerdGraph endpoint `nerdgraph` posts to, as shown (default: the US region's). */
  nerdgraphUrl?: string | undefined;
  /** The app's account resolver: the same key checks and memory as its v2 routes. */
  accounts: AccountResolver;
  identityOf: IdentityOf;
  /** The app itself: the explained request is sent through it, marked internal, inside its recorded run. */
  translate(request: Request): Promise<Response>;
}

interface ExplainContext extends ExplainDeps {
  table: RouteTable<Mapping>;
  documents: () => OperationDocuments;
}

/** A mapping's notes; read defensively, as a passthrough mapping may declare fewer of them. */
function notesOf(mapping: Mapping) {
  return {
    reshape: mapping.fields ?? [],
    knownGaps: mapping.knownGaps ?? [],
    assumptions: mapping.assumptions ?? [],
    parameters: mapping.parameters?.notes() ?? [],
  };
}

interface ExplainRequest {
  headers: Headers;
  /** The gateway's origin as the caller reached it. */
  origin: string;
  address?: string;
  /** The explain request's own (deadline, client gone): the run ends with it. */
  signal: AbortSignal;
}

async function explain(deps: ExplainContext, input: ExplainInput, request: ExplainRequest): Promise<{ explanation: Explanation; caller: Caller }> {
  // Relative to the gateway's own origin, so `..` cannot climb out of /v2/ and Link URLs look right.
  const target = new URL(input.request, request.origin);
  if (target.origin !== request.origin || !V2_TARGET.test(target.pathname)) {
    throw new V2Error(422, 'Invalid parameter request: must start with /v2/ (or be /deployments.json or /deployments.xml)', { kind: 'invalid_parameter' });
  }
  const matched = deps.table.match(target.pathname);
  if (matched === undefined) throw notFound('Unknown v2 resource');
  if (matched.format !== 'json' && matched.format !== 'xml') throw notFound(`Unknown format .${matched.format}: use .json or .xml`);
  const hit = matched.entries.find((entry) => entry.methods.includes(input.method));
  if (!hit) {
    throw new V2Error(422, `Invalid parameter method: ${matched.entries[0]?.template ?? 'this route'} is served for ${matched.allow.join(', ')}`, {
      kind: 'invalid_parameter',
    });
  }
  const mapping = hit.value;
  const caller = callerFrom(request.headers, deps.identityOf, request.address);
  const shown = shownGraphqlUrl(deps.nerdgraphUrl);
  const graphqlUrl = shown.url;
  /** The answer, in reading order: what the request is, what ran, then the mapping's notes. */
  const answer = (outcome: { calls: ExplainedCall[]; status: number | null; error?: string | undefined; notes: string[] }): { explanation: Explanation; caller: Caller } => ({
    explanation: {
      request: input.request,
      method: input.method,
      route: mapping.route,
      mapping: mapping.id,
      kind: mapping.kind as string,
      fidelity: mapping.fidelity,
      summary: mapping.summary,
      graphqlUrl,
      status: outcome.status,
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      notes: shown.local && outcome.calls.length > 0 ? [...outcome.notes, LOCAL_GRAPHQL_NOTE] : outcome.notes,
      calls: outcome.calls,
      ...notesOf(mapping),
    },
    caller,
  });

  // Handled by its kind string: passthrough mappings are declared by the migration modes.
  if ((mapping.kind as string) === 'passthrough') {
    return answer({
      calls: [],
      status: null,
      notes: [
        'Passed through: the gateway forwards this request unchanged to the legacy REST API (LEGACY_REST_URL) and makes no NerdGraph call. New Relic keeps this namespace alive after the v2 end of life.',
      ],
    });
  }
  if (mapping.kind === 'unsupported') {
    return answer({
      calls: [],
      status: mapping.status,
      error: mapping.title,
      notes: ['NerdGraph cannot serve this route: the gateway always answers it with this error, without calling NerdGraph.'],
    });
  }

  // Authenticated before anything is built for the run: a refused, unknown or throttled key, a
  // malformed X-Account-Id or an account the key cannot read gets its v2 answer here, as on /v2.
  // A key of several accounts that names none is the translation's own answer (a 400 it explains).
  await deps.accounts.resolve(caller, request.headers.get('x-account-id') ?? undefined, request.signal).catch((error: unknown) => {
    if (!(error instanceof V2Error && error.kind === 'account_ambiguous')) throw error;
  });
  const documents = deps.documents();
  const recorder = createRecordingClient(deps.nerdgraph, documents);
  const hasBody = input.body !== undefined;
  const inner = markInternal(
    new Request(target, {
      method: input.method,
      headers: forwardedHeaders(request.headers, hasBody),
      ...(hasBody ? { body: input.body } : {}),
    }),
  );
  const translated = await runRecorded({ recorder, parent: request.signal }, () => deps.translate(inner));
  const text = await translated.text();
  // The key's accounts lookup was the check above (made now, or within ACCOUNTS_CACHE_TTL_MS): shown first, once.
  const accountsLookup = documents.get(ACCOUNTS_OPERATION);
  const lookup: RecordedCall[] = accountsLookup ? [{ operation: ACCOUNTS_OPERATION, query: accountsLookup.text, variables: {}, kind: 'query', sent: true }] : [];
  const calls = [...lookup, ...recorder.calls.filter((call) => call.operation !== ACCOUNTS_OPERATION)].map((call) => explainCall(call, graphqlUrl));
  const notes: string[] = [];
  const held = calls.filter((call) => !call.sent);
  if (held.length > 0) {
    const success = mapping.kind === 'write' ? ` Once sent, the gateway answers ${mapping.successStatus} with the v2 body built from the mutation's payload.` : '';
    notes.push(
      `Dry run: ${held.map((c) => c.operation).join(', ')} was recorded, not sent, and nothing was changed; \`status\` is the dry run's answer (the translation stops where its mutation is held back).${success}`,
    );
  }
  return answer({ calls, status: translated.status, error: translated.status >= 400 ? errorTitleOf(text) : undefined, notes });
}

/** Serialised with the caller's key (and anything key-shaped, e.g. pasted into a filter) masked. */
function withoutKey(explanation: Explanation, apiKey: string): string {
  const text = redactKeys(JSON.stringify(explanation));
  const escaped = JSON.stringify(apiKey).slice(1, -1);
  return text.split(escaped).join('[redacted]');
}

/**
 * Mounts `GET /bridge/explain` on the gateway app (src/app.ts), with the app's own account
 * resolver and identity hasher: explain spends the same per-address budget and sees the same
 * refused keys as the v2 routes.
 */
export function registerExplainRoute(app: Hono<GatewayEnv>, deps: ExplainDeps): void {
  let documents: OperationDocuments | undefined;
  const context: ExplainContext = {
    ...deps,
    table: createRouteTable(deps.mappings.map((mapping) => ({ template: mapping.route, methods: methodsOf(mapping), value: mapping }))),
    // Loaded on the first explain, not for every app built (tests build many).
    documents: () => (documents ??= loadDocuments()),
  };
  app.get('/bridge/explain', async (c) => {
    c.set('routeLabel', '/bridge/explain');
    c.set('format', 'json');
    const input = parseExplainQuery(c.req.queries());
    const address = c.env?.incoming?.socket.remoteAddress;
    const { explanation, caller } = await explain(context, input, {
      headers: c.req.raw.headers,
      origin: new URL(c.req.url).origin,
      signal: c.get('signal'),
      ...(address === undefined ? {} : { address }),
    });
    return c.body(withoutKey(explanation, caller.apiKey), 200, { 'content-type': 'application/json; charset=utf-8' });
  });
}

// ---- the readable form (npm run explain) ---------------------------------------------------

const indent = (text: string, by = '    '): string =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? line : `${by}${line}`))
    .join('\n');

/** An explanation as text for a terminal: documents, variables, NRQL, curl, then the notes. */
export function renderExplanation(e: Explanation): string {
  const out: string[] = [];
  out.push(`${e.method} ${e.request}`);
  out.push(`  route     ${e.method} ${e.route}  (mapping ${e.mapping}, ${e.kind}, fidelity ${e.fidelity})`);
  out.push(`  summary   ${e.summary}`);
  out.push(`  status    ${e.status === null ? 'none (nothing ran)' : `${e.status} as the translation answered`}${e.error ? `: ${e.error}` : ''}`);
  for (const note of e.notes) out.push(`  note      ${note}`);
  out.push('');
  if (e.calls.length === 0) {
    out.push('No NerdGraph call.');
  } else {
    out.push(`NerdGraph calls (${e.calls.length}), each runnable as it is: POST to ${e.graphqlUrl} with your key in the API-Key header.`);
    e.calls.forEach((call, i) => {
      out.push('');
      out.push(`[${i + 1}] ${call.kind} ${call.operation}${call.sent ? '' : '  (recorded, NOT sent: dry run)'}`);
      if (call.note) out.push(`  note: ${call.note}`);
      out.push('  document:', indent(call.query));
      out.push('  variables:', indent(JSON.stringify(call.variables, null, 2)));
      if (call.nrql.length > 0) out.push('  NRQL:', ...call.nrql.map((nrql) => indent(nrql)));
      out.push('  curl:', indent(call.curl));
    });
  }
  const section = (title: string, lines: string[]): void => {
    if (lines.length === 0) return;
    out.push('', `${title}:`, ...lines.map((line) => `  - ${line}`));
  };
  section('Reshape (how each v2 field is built)', e.reshape.map((f) => `${f.field} [${f.fidelity}]: ${f.source}`));
  section('Known gaps', e.knownGaps.map((g) => (g.path ? `${g.path}: ${g.description}` : g.description)));
  section('Assumptions', [...e.assumptions]);
  section('Parameters', e.parameters.map((p) => `${p.name} [${p.fidelity}]: ${p.note}`));
  return `${out.join('\n')}\n`;
}
