import { UpstreamError } from '../upstream/errors.ts';
import type { V2Body } from '../v2/format.ts';

/** Steps every entity route shares: reshape the answer, wrap it (scoping: entity-ref.ts). */

/** Runs a mapping's reshape; a shape it cannot read is an upstream failure, not a 500. */
export function reshapeOrFail(reshape: () => V2Body, operation: string): V2Body {
  try {
    return reshape();
  } catch {
    throw new UpstreamError('upstream_failure', `unexpected entity shape in ${operation}`);
  }
}

/** The v2 body: the data under its wrapper key, and v2's link templates beside it. */
export function wrap(wrapperKey: string, content: V2Body | V2Body[], topLinks: V2Body | undefined): V2Body {
  return { [wrapperKey]: content, ...(topLinks ? { links: topLinks } : {}) };
}
