/**
 * The gateway's own requests to itself (the translation side of a comparison, a dry run):
 * recognised by identity, so the mode dispatch forces `translate` for them and the access log
 * and usage counts leave them out. A WeakSet: nothing a client sends can make a request internal.
 */
const internal = new WeakSet<Request>();

export function markInternal(request: Request): Request {
  internal.add(request);
  return request;
}

export function isInternal(request: Request): boolean {
  return internal.has(request);
}
