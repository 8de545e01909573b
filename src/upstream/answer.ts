import type { z } from 'zod';
import { UpstreamError } from './errors.ts';

/** Validates an upstream answer at the edge; a surprise is an upstream failure (502), never a 500. */
export function parseAnswer<T>(schema: z.ZodType<T>, data: unknown, operation: string): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new UpstreamError('upstream_failure', `unexpected ${operation} answer`);
  return parsed.data;
}
