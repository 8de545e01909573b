import type { ResolvedRoute } from '../routes/resolved-route.ts';

/**
 * The gateway's own requests to itself (the translation side of a comparison, a dry run, an
 * explained request): recognised by identity, so they are always translated and the access log
 * and usage counts leave them out. A WeakMap: nothing a client sends can make a request internal.
 * Each carries the route already resolved for the request it serves, so it is not matched again.
 */
const internal = new WeakMap<Request, ResolvedRoute | undefined>();

export function markInternal(request: Request, route?: ResolvedRoute): Request {
  // The caller's mode was for the caller's request; the gateway's own is translated.
  internal.set(request, route === undefined ? undefined : { ...route, mode: 'translate' });
  return request;
}

export function isInternal(request: Request): boolean {
  return internal.has(request);
}

/** The route an internal request carries (undefined: none, it is matched like any request). */
export function carriedRoute(request: Request): ResolvedRoute | undefined {
  return internal.get(request);
}
