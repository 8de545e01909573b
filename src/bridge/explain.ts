import type { Hono } from 'hono';
import { getPath } from 'hono/utils/url';
import { z } from 'zod';
import type { AccountResolver } from '../caller/accounts.ts';
import { callerFrom, type Caller, type IdentityOf } from '../caller/identity.ts';
import { redactKeys } from '../ops/redact.ts';
import type { GatewayEnv } from '../routes/context.ts';
import type { Mapping } from '../routes/mapping.ts';
import { isServedFormat, type ResolvedRoute } from '../routes/resolved-route.ts';
import type { ShadowRequest } from '../routes/shadow-translation.ts';
import type { NerdGraph } from '../upstream/client.ts';
import { loadDocuments, type OperationDocuments } from '../upstream/documents.ts';
import { runRecorded } from '../upstream/recorded-run.ts';
import { createRecordingClient, type RecordedCall } from '../upstream/recording-client.ts';
import { V2Error, notFound } from '../v2/errors.ts';
import { parseExplainQuery, V2_TARGET, type ExplainInput } from './explain-input.ts';
import { ACCOUNTS_OPERATION, explainCall, LOCAL_GRAPHQL_NOTE, shownGraphqlUrl, type ExplainedCall, type Explanation } from './explanation.ts';

/**
 * `GET /bridge/explain?request=<v2 path and query>`: what NerdGraph calls one legacy call
 * becomes, for the caller's own requests (the migration guide). The caller's key is verified
 * first, as for any v2 call (refused-key memory, per-address limit, the accounts lookup), and
 * nothing is allocated for a caller that fails it. Then the request is translated as a shadow
 * request (src/routes/shadow-translation.ts) in a recorded run (src/upstream/recorded-run.ts): a NerdGraph client of its own
 * records every call; queries really run (the translation needs their answers: GUIDs, metric
 * names), mutations are recorded and never sent; the route caches are bypassed, so every call
 * a cold gateway makes shows. The answer holds each call's exact document, variables and NRQL,
 * a body that can be POSTed to /graphql as it is, a curl command without the key, and the
 * mapping's notes.
 *
 * The explained request is matched once, here (by the app's route resolver), and handed to the
 * translation with that route: nothing matches it again.
 */

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
  /** The app's route resolver: the one match of the explained request (src/routes/resolved-route.ts). */
  resolveRoute(path: string, method: string): ResolvedRoute | undefined;
  /** The real NerdGraph client: a run's recorder sends its queries there. */
  nerdgraph: NerdGraph;
  /** The NerdGraph endpoint `nerdgraph` posts to, as shown (default: the US region's). */
  nerdgraphUrl?: string | undefined;
  /** The app's account resolver: the same key checks and memory as its v2 routes. */
  accounts: AccountResolver;
  identityOf: IdentityOf;
  /** The app's translation of a shadow request (src/routes/shadow-translation.ts): the explained request, inside its recorded run. */
  translateShadow(shadow: ShadowRequest): Promise<Response>;
  /** The documents the mappings send (default: loadDocuments(), on the first explain). */
  documents?: OperationDocuments;
}

interface ExplainContext extends Omit<ExplainDeps, 'documents'> {
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
  /** The explain request's id: the explained request's answer carries it. */
  requestId: string;
}

async function explain(deps: ExplainContext, input: ExplainInput, request: ExplainRequest): Promise<{ explanation: Explanation; caller: Caller }> {
  // Relative to the gateway's own origin, so `..` cannot climb out of /v2/ and Link URLs look right.
  const target = new URL(input.request, request.origin);
  if (target.origin !== request.origin || !V2_TARGET.test(target.pathname)) {
    throw new V2Error(422, 'Invalid parameter request: must start with /v2/ (or be /deployments.json or /deployments.xml)', { kind: 'invalid_parameter' });
  }
  // Resolved from the path as Hono decodes it for a request sent directly (`%31` is `1`).
  const route = deps.resolveRoute(getPath(new Request(target)), input.method);
  if (route?.template === undefined) throw notFound('Unknown v2 resource');
  if (!isServedFormat(route.format)) throw notFound(`Unknown format .${route.format}: use .json or .xml`);
  const mapping = route.mapping;
  if (mapping === undefined) {
    throw new V2Error(422, `Invalid parameter method: ${route.template} is served for ${route.allow.join(', ')}`, {
      kind: 'invalid_parameter',
    });
  }
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
  const inner = new Request(target, {
    method: input.method,
    headers: forwardedHeaders(request.headers, hasBody),
    ...(hasBody ? { body: input.body } : {}),
  });
  const shadow: ShadowRequest = { request: inner, route, requestId: request.requestId, parent: request.signal };
  const translated = await runRecorded({ recorder }, () => deps.translateShadow(shadow));
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
  let documents: OperationDocuments | undefined = deps.documents;
  const context: ExplainContext = {
    ...deps,
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
      requestId: c.get('requestId'),
      ...(address === undefined ? {} : { address }),
    });
    return c.body(withoutKey(explanation, caller.apiKey), 200, { 'content-type': 'application/json; charset=utf-8' });
  });
}
