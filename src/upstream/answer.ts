import { z } from 'zod';
import { checkedParse } from './compiled-check.ts';
import { UpstreamError } from './errors.ts';

/**
 * Validates an upstream answer at the edge; a surprise is an upstream failure (502), never a 500.
 * Through the check compiled from the schema (compiled-check.ts): what passes it is the answer
 * itself, not zod's copy, so it may be frozen (the micro-cache's) and is never to be changed.
 */
export function parseAnswer<T>(schema: z.ZodType<T>, data: unknown, operation: string): T {
  const parsed = checkedParse(schema, data);
  if (!parsed.success) throw new UpstreamError('upstream_failure', `unexpected ${operation} answer`);
  return parsed.data;
}

/**
 * An NRQL result container as the documents select it (`nrql { results }`): results are opaque
 * JSON whose shape follows the query, so each caller reads its rows defensively.
 */
export const NrqlResults = z.object({ results: z.array(z.unknown()).nullable() }).nullable();
