/**
 * NerdGraph failure classes (newrelic-client-go's internal/http/graphql.go split). Classified in
 * src/upstream/errors.ts, which answers each in v2 terms; named here, at the bottom, because the
 * kinds of the v2 errors an upstream failure or a failed write becomes are made of them
 * (`upstream_timeout`, `write_forbidden`).
 */
export type UpstreamErrorClass =
  | 'bad_key'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'timeout'
  /** The inbound request went away (its client disconnected) before NerdGraph answered. */
  | 'cancelled'
  | 'invalid_input'
  | 'unavailable'
  | 'upstream_failure';

/**
 * What a V2Error is, machine-readable: logged with the error (the request's log line `kind`)
 * and what code branches on. Never part of the answer's body. A union, so a kind misspelt where
 * an error is raised or tested fails the typecheck; a new kind is added here.
 */
export type V2ErrorKind =
  /** The default, for an error raised without a kind. */
  | 'client'
  // The HTTP edge and the request's life (src/app.ts, src/v2/, src/routes/).
  | 'bad_body'
  | 'body_too_large'
  | 'bad_host'
  | 'method'
  | 'client_closed'
  | 'request_deadline'
  // The caller: key and account (src/caller/).
  | 'missing_key'
  | 'bad_key'
  | 'bad_account'
  | 'account_forbidden'
  | 'account_ambiguous'
  | 'key_verifications_limited'
  // /bridge/'s access guard.
  | 'bridge_token'
  | 'bridge_not_loopback'
  // Parameters and routes.
  | 'not_found'
  | 'invalid_parameter'
  | 'unsupported_route'
  | 'passthrough_unavailable'
  // A mapping's own refusals (mappings/).
  | 'invalid_channel'
  | 'channel_type_unsupported'
  | 'invalid_create'
  | 'invalid_deployment'
  | 'invalid_label'
  | 'invalid_policy'
  | 'invalid_update'
  | 'still_reporting'
  | 'list_too_large'
  | 'instances_over_bound'
  | 'directory_truncated'
  | 'users_incomplete'
  | 'upstream_shape'
  // A NerdGraph read that failed (src/upstream/errors.ts toV2Error), or could not go on.
  | `upstream_${UpstreamErrorClass}`
  /** A list NerdGraph answered with a repeated cursor (src/routes/cursor-walk.ts). */
  | 'upstream_failure'
  | 'budget_refused'
  // A write (src/routes/operations.ts): refused, not sent, unconfirmed, or partly applied.
  | `write_${UpstreamErrorClass}`
  | 'write_refused'
  | 'write_not_sent'
  | 'write_unconfirmed'
  | 'write_partial'
  // The legacy REST API of passthrough (src/modes/passthrough.ts).
  | 'legacy_timeout'
  | 'legacy_unreachable'
  | 'legacy_failure'
  | 'legacy_write_unconfirmed';
