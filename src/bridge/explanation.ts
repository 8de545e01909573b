import { Kind, parse, type TypeNode } from 'graphql';
import { isLoopbackHost } from './access.ts';
import type { FieldNote, KnownGap, ParameterNote } from '../routes/mapping.ts';
import type { RecordedCall } from '../upstream/recording-client.ts';

/** What /bridge/explain answers (src/bridge/explain.ts): the explanation and each NerdGraph call in it. */

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

export const METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
export type ExplainMethod = (typeof METHODS)[number];

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

export const ACCOUNTS_OPERATION = 'AccessibleAccounts';

const CALL_NOTES: Readonly<Record<string, string>> = {
  [ACCOUNTS_OPERATION]:
    'How the gateway finds the account to use (v2 inferred it from the key; NerdGraph does not): a migrated script can use its account id directly.',
};

export function explainCall(call: RecordedCall, graphqlUrl: string): ExplainedCall {
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
