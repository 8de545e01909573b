/**
 * The sandbox's NerdGraph-compatible `POST /graphql`: API-key auth, request-body checks,
 * and graphql-js execution against the sandbox SDL (queries through actor.ts, mutations
 * through mutations.ts).
 *
 * Status codes: 401 with NerdGraph's BAD_API_KEY body for a missing or unknown key, 400 for
 * a body that is not a GraphQL request, and 200 for everything GraphQL itself reports
 * (syntax, validation, variable and resolver errors) in graphql-js's `{data?, errors}` shape,
 * which is how NerdGraph answers them too.
 */
import {
  GraphQLError,
  Kind,
  defaultFieldResolver,
  execute,
  parse,
  specifiedRules,
  validate,
  type ASTVisitor,
  type DocumentNode,
  type GraphQLFieldResolver,
  type GraphQLSchema,
  type ValidationContext,
} from 'graphql';
import { ActorResolver, indexSandboxData, type SandboxRequestContext } from './actor.ts';
import type { SandboxData } from './model.ts';
import { MutationResolver, mutationRoot } from './mutations.ts';
import { notificationMutationRoot } from './notifications/mutations.ts';
import { alertConditionMutationRoot } from './alert-condition-mutations.ts';
import { alertPolicyMutationRoot } from './alert-policy-mutations.ts';
import { loadSandboxSchema } from './schema.ts';
import { keyUserOf } from './users.ts';
import { countWrite } from './write-counts.ts';
import { ANONYMOUS_OPERATION, REFUSED_OPERATION, countRead, type ReadCounter } from './read-counts.ts';

export type GraphqlHandler = (request: Request) => Promise<Response>;

export const BAD_API_KEY_BODY = {
  errors: [{ message: 'Bad API Key or no API Key provided', extensions: { error_code: 'BAD_API_KEY' } }],
} as const;

interface GraphqlRequestBody {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

/** A parsed-and-validated document, or the errors that stopped it. */
type PreparedDocument = { document: DocumentNode } | { errors: readonly GraphQLError[] };

const DOCUMENT_CACHE_SIZE = 100;

/**
 * Bounds that keep one request from exhausting the process (the sandbox can run inside the
 * gateway): body size, tokens, selection depth, and entity searches per document (each one
 * filters and sorts the whole data set).
 */
export const LIMITS = { bodyBytes: 1024 * 1024, tokens: 10_000, depth: 15, entitySearches: 5 } as const;

function boundedDocument(context: ValidationContext): ASTVisitor {
  let depth = 0;
  let searches = 0;
  return {
    SelectionSet: {
      enter(node) {
        depth++;
        if (depth === LIMITS.depth + 1) context.reportError(new GraphQLError(`Query is nested deeper than ${LIMITS.depth} levels`, { nodes: node }));
      },
      leave() {
        depth--;
      },
    },
    Field(node) {
      if (node.name.value === 'entitySearch' && ++searches === LIMITS.entitySearches + 1) {
        context.reportError(new GraphQLError(`At most ${LIMITS.entitySearches} entitySearch fields per request`, { nodes: node }));
      }
    },
  };
}

const RULES = [...specifiedRules, boundedDocument];

/**
 * Least-recently-used cache of prepared documents by text: the gateway sends the same few
 * documents over and over, and parse+validate costs more than executing them here.
 */
class DocumentCache {
  private readonly entries = new Map<string, PreparedDocument>();

  private readonly schema: GraphQLSchema;
  private readonly capacity: number;

  constructor(
    schema: GraphQLSchema,
    capacity: number,
  ) {
    this.schema = schema;
    this.capacity = capacity;
  }

  get(text: string): PreparedDocument {
    const cached = this.entries.get(text);
    if (cached) {
      // Re-insert to mark as most recently used (Map keeps insertion order).
      this.entries.delete(text);
      this.entries.set(text, cached);
      return cached;
    }
    const prepared = this.prepare(text);
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(text, prepared);
    return prepared;
  }

  private prepare(text: string): PreparedDocument {
    let document: DocumentNode;
    try {
      document = parse(text, { maxTokens: LIMITS.tokens });
    } catch (error) {
      if (error instanceof GraphQLError) return { errors: [error] };
      throw error;
    }
    const errors = validate(this.schema, document, RULES);
    return errors.length > 0 ? { errors } : { document };
  }
}

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

function badRequest(message: string): Response {
  return json({ errors: [{ message }] }, 400);
}

/** Checks the body is a GraphQL-over-HTTP request; returns an error message if not. */
function readRequestBody(text: string): GraphqlRequestBody | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'Request body must be JSON';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'Request body must be a JSON object';
  const { query, variables, operationName } = body as Record<string, unknown>;
  if (typeof query !== 'string' || query.trim() === '') return 'Request body must contain a "query" string';
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
    return '"variables" must be a JSON object';
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    return '"operationName" must be a string';
  }
  return {
    query,
    variables: variables as Record<string, unknown> | null | undefined,
    operationName: operationName as string | null | undefined,
  };
}

/**
 * The mutation root fields, each counting the writes it executed (write-counts.ts): a field
 * that threw, or answered payload `errors` (agentApplicationSettingsUpdate), wrote nothing.
 */
function countedMutations(data: SandboxData, root: Record<string, (args: never) => unknown>): Record<string, (args: never) => unknown> {
  const refused = (result: unknown): boolean => {
    const errors = typeof result === 'object' && result !== null ? (result as { errors?: unknown }).errors : undefined;
    // aiNotifications mutations refuse in a singular `error` (alerts_channels, notifications/mutations.ts).
    const error = typeof result === 'object' && result !== null ? (result as { error?: unknown }).error : undefined;
    return (Array.isArray(errors) && errors.length > 0) || (error !== undefined && error !== null);
  };
  return Object.fromEntries(
    Object.entries(root).map(([field, resolve]) => [
      field,
      (args: never): unknown => {
        const result = resolve(args);
        const count = (value: unknown): unknown => {
          if (!refused(value)) countWrite(data.writes.executed, 'nerdgraph', field);
          return value;
        };
        return result instanceof Promise ? result.then(count) : count(result);
      },
    ]),
  );
}

/**
 * NerdGraph's answer to a request beyond its user's concurrency limit: HTTP 429 ("NerdGraph
 * usage limits": "If requests are limited, they'll be rejected with HTTP status code 429"). The
 * page shows no body; this one is GraphQL's error shape with the errorClass newrelic-client-go
 * retries on (nerdgraph.md §9: TOO_MANY_REQUESTS). Body and message UNCONFIRMED; no Retry-After
 * (none documented: "as your in-flight requests complete ... new requests will automatically
 * begin to succeed again").
 */
export const TOO_MANY_CONCURRENT_BODY = {
  errors: [{ message: 'Too many concurrent requests for this user; retry when some have completed', extensions: { errorClass: 'TOO_MANY_REQUESTS' } }],
} as const;

export interface GraphqlHandlerOptions {
  /**
   * Every answer, once worked out, waits for this before it leaves, still counted in flight (a
   * test knob, not a New Relic behaviour): a real NerdGraph call takes time, so concurrency
   * builds up; a test can hold answers until it has seen what it waits for.
   */
  hold?: () => Promise<void>;
  /** Where every request and the NRQL queries it ran are counted (read-counts.ts); absent: not counted. */
  reads?: ReadCounter;
}

/** The types whose `nrql` field runs a query (NrdbResultContainer.nrql only echoes it). */
const NRQL_PARENTS: ReadonlySet<string> = new Set(['Actor', 'Account']);

/** The request's operation: its operationName, else the name of the document's first operation. */
function operationNameOf(document: DocumentNode, requested: string | null | undefined): string {
  if (requested) return requested;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) return definition.name?.value ?? ANONYMOUS_OPERATION;
  }
  return ANONYMOUS_OPERATION;
}

/**
 * graphql-js's default resolver, counting each NRQL query field as it runs (so a field under
 * a null parent, or skipped, is not counted; aliases are each counted).
 */
function nrqlCountingResolver(onQuery: () => void): GraphQLFieldResolver<unknown, unknown> {
  return (source, args, context, info) => {
    if (info.fieldName === 'nrql' && NRQL_PARENTS.has(info.parentType.name)) onQuery();
    return defaultFieldResolver(source, args, context, info);
  };
}

/** `now` is the sandbox clock NRQL queries run against (their default window, which rows exist). */
export function createGraphqlHandler(data: SandboxData, now: () => number = Date.now, options: GraphqlHandlerOptions = {}): GraphqlHandler {
  const schema = loadSandboxSchema();
  const index = indexSandboxData(data);
  const documents = new DocumentCache(schema, DOCUMENT_CACHE_SIZE);
  /** Requests in flight per user id (users.ts keyUserOf), whatever key each was sent with. */
  const inFlight = new Map<number, number>();
  const refused = (response: Response): Response => {
    if (options.reads) countRead(options.reads, REFUSED_OPERATION, 0);
    return response;
  };
  const answer = async (request: Request, apiKey: string, accountIds: number[]): Promise<Response> => {
    const response = await execution(request, apiKey, accountIds);
    await options.hold?.();
    return response;
  };

  return async (request) => {
    // Headers.get is case-insensitive; New Relic clients send either spelling.
    const apiKey = request.headers.get('api-key') || request.headers.get('x-api-key') || '';
    const accountIds = data.keys.get(apiKey);
    if (!accountIds) return refused(json(BAD_API_KEY_BODY, 401));

    // At most `concurrentRequestsPerUser` in flight per user, counted from
    // arrival to answer; 0 turns the limit off. Source: "NerdGraph usage limits" (25 per user,
    // "tracked and enforced per user, not per user key"). New Relic "may allow more"; the
    // sandbox never does, so a client that stays within 25 is all it can count on.
    const limit = data.behaviours.concurrentRequestsPerUser;
    if (limit <= 0) return answer(request, apiKey, accountIds);
    const user = keyUserOf(data, apiKey).id;
    const current = inFlight.get(user) ?? 0;
    if (current >= limit) return refused(json(TOO_MANY_CONCURRENT_BODY, 429));
    inFlight.set(user, current + 1);
    try {
      return await answer(request, apiKey, accountIds);
    } finally {
      const left = (inFlight.get(user) ?? 1) - 1;
      if (left > 0) inFlight.set(user, left);
      else inFlight.delete(user);
    }
  };

  async function execution(request: Request, apiKey: string, accountIds: number[]): Promise<Response> {
    if (Number(request.headers.get('content-length') ?? 0) > LIMITS.bodyBytes) return refused(json({ errors: [{ message: 'Request body too large' }] }, 413));
    const text = await request.text();
    if (text.length > LIMITS.bodyBytes) return refused(json({ errors: [{ message: 'Request body too large' }] }, 413));
    const body = readRequestBody(text);
    if (typeof body === 'string') return refused(badRequest(body));

    let nrqlQueries = 0;
    let operation = REFUSED_OPERATION;
    try {
      const prepared = documents.get(body.query);
      if ('errors' in prepared) return json({ errors: prepared.errors }, 200);
      operation = operationNameOf(prepared.document, body.operationName);

      const context: SandboxRequestContext = { apiKey, accountIds };
      const result = await execute({
        schema,
        document: prepared.document,
        // Query and mutation root fields; mutation fields run one after another, as GraphQL requires.
        rootValue: {
          actor: () => new ActorResolver(index, context, now),
          ...countedMutations(data, mutationRoot(new MutationResolver(index, context, now))),
          // alerts_channels (notifications/mutations.ts)
          ...countedMutations(data, notificationMutationRoot(data, context, now)),
          // NRQL conditions and condition deletes (alert-condition-mutations.ts)
          ...countedMutations(data, alertConditionMutationRoot(data, context)),
          // alerts_policies (alert-policy-mutations.ts)
          ...countedMutations(data, alertPolicyMutationRoot(data, context, now)),
        },
        contextValue: context,
        variableValues: body.variables ?? undefined,
        operationName: body.operationName ?? undefined,
        ...(options.reads && { fieldResolver: nrqlCountingResolver(() => nrqlQueries++) }),
      });
      return json(result, 200);
    } catch {
      // Not a GraphQL error (e.g. a stack overflow on pathological input): still the
      // client's request, answered as one that cannot be executed, never a 500.
      return badRequest('Request could not be executed');
    } finally {
      if (options.reads) countRead(options.reads, operation, nrqlQueries);
    }
  }
}
