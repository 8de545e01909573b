import type { UpstreamError } from './errors.ts';

/**
 * One NerdGraph call as its callers describe it: the operation, its variables, the key, and how
 * the answer may be shared. Read by the client (client.ts) and by one attempt of it (attempt.ts).
 */
export interface UpstreamCall {
  operation: string;
  variables: Record<string, unknown>;
  apiKey: string;
  /**
   * The inbound request's signal: aborted when the request's deadline passes (reason named
   * TimeoutError: the call fails as `timeout`) or its client disconnects (any other reason:
   * `cancelled`). The call (retries included) stops when it fires.
   */
  signal?: AbortSignal;
  /**
   * For reads whose answer is only read, never mutated: when the answer's bytes equal the last
   * successful answer to this operation, the same parsed object is returned (no parse), so
   * callers can reuse whatever they derived from it. Every call still goes to NerdGraph.
   */
  reuseIdenticalAnswer?: boolean;
  /**
   * A name unique in this process for exactly these variables (e.g. a memoised plan's id): the
   * micro-cache keys the read by it instead of serialising the variables again.
   */
  variablesKey?: string;
  /**
   * Answer paths (dot-joined response keys, aliases as the document names them, e.g.
   * `actor.account.known`) of fields the caller can do without: a GraphQL error at or below one
   * of them (an NRQL TIMEOUT, say) leaves that field null in the data returned instead of
   * failing the call, and is handed to `onOptionalFieldError`, classified.
   */
  optionalFields?: readonly string[];
  onOptionalFieldError?: (path: string, error: UpstreamError) => void;
}
