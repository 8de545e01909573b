import type { OperationDocuments } from './documents.ts';
import type { NerdGraph, UpstreamCall } from './client.ts';
import { UpstreamError } from './errors.ts';

/**
 * A NerdGraph client that writes down every call a translation makes, for the dry runs of the
 * migration modes and for `explain`: queries go on to the real client (the translation needs
 * their answers), mutations are recorded and never sent. A recorded mutation fails as an
 * upstream error that says nothing was sent, so the write runner stops there, before any
 * read-back, and answers "nothing was changed".
 *
 * One recorder per translation run: the app sends a recorded run's calls to its recorder
 * (src/upstream/recorded-run.ts), so no other request's calls land in it.
 */
export interface RecordedCall {
  operation: string;
  /** The exact GraphQL document the gateway would send. */
  query: string;
  variables: Record<string, unknown>;
  kind: 'query' | 'mutation';
  /** False for a mutation: the dry run kept it. */
  sent: boolean;
}

export interface RecordingClient extends NerdGraph {
  /** The calls so far, in the order they were made. */
  readonly calls: readonly RecordedCall[];
}

/**
 * alerts_channels: the text of NerdGraph SecureValue inputs the gateway sends (a destination's
 * `auth.basic.password`, `auth.token.token`, `secureUrl.secureSuffix`) is never written down:
 * dry-run records and `explain` show it as `[secret]`. Only what is recorded is masked.
 */
const SECRET_INPUT_KEYS = new Set(['password', 'token', 'secureSuffix']);

function maskSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map(maskSecrets) as T;
  if (value === null || typeof value !== 'object') return value;
  const masked: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) masked[key] = SECRET_INPUT_KEYS.has(key) && typeof inner === 'string' ? '[secret]' : maskSecrets(inner);
  return masked as T;
}

export function createRecordingClient(real: NerdGraph, documents: OperationDocuments): RecordingClient {
  const calls: RecordedCall[] = [];
  return {
    calls,
    async call<T = unknown>(call: UpstreamCall): Promise<T> {
      const document = documents.get(call.operation);
      if (!document) throw new Error(`Unknown operation ${call.operation}`);
      // Variables are copied: a caller may reuse (or a cache freeze) the object it passed.
      const recorded: RecordedCall = {
        operation: call.operation,
        query: document.text,
        variables: maskSecrets(structuredClone(call.variables)),
        kind: document.kind,
        sent: document.kind === 'query',
      };
      calls.push(recorded);
      if (document.kind === 'mutation') {
        throw new UpstreamError('unavailable', 'dry run: the mutation was recorded, not sent', { sent: false });
      }
      return real.call<T>(call);
    },
  };
}
