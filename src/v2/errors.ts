import { METRIC_RULE_TITLES } from '../../facts/rule-titles.ts';
import { WIRE_TITLES } from '../../facts/v2-titles.ts';
import type { V2ErrorKind } from './error-kinds.ts';

export type { UpstreamErrorClass, V2ErrorKind } from './error-kinds.ts';

/**
 * The one typed HTTP error of the gateway. Everything a client can cause or see ends up as a
 * V2Error, and the single error handler in app.ts turns it into a v2-shaped body
 * (`{"error":{"title":"..."}}`), in the format the request asked for.
 */
export type V2Status = 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 422 | 429 | 500 | 502 | 503 | 504;

export interface V2ErrorOptions {
  /** Internal cause, for logs only: never rendered to the client. */
  cause?: unknown;
  headers?: Record<string, string>;
  /** Machine-readable class, logged with the error (error-kinds.ts); `client` when absent. */
  kind?: V2ErrorKind;
  /** Details v2 listed under `error.messages` (e.g. which field failed validation). */
  messages?: readonly string[];
}

export class V2Error extends Error {
  readonly headers: Record<string, string>;
  readonly kind: V2ErrorKind;
  readonly messages: readonly string[] | undefined;

  readonly status: V2Status;
  readonly title: string;

  constructor(
    status: V2Status,
    title: string,
    options: V2ErrorOptions = {},
  ) {
    super(title, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.title = title;
    this.name = 'V2Error';
    this.headers = options.headers ?? {};
    this.kind = options.kind ?? 'client';
    this.messages = options.messages;
  }
}

/** Titles REST v2 itself used (facts/v2-titles.ts), kept verbatim because clients match on them. */
export const V2Titles = WIRE_TITLES;

/** Titles of the metric-data rules (docs/metric-data-rules.md), as both faces word them (facts/rule-titles.ts). */
export const MetricTitles = METRIC_RULE_TITLES;

export const notFound = (title = 'Resource not found'): V2Error => new V2Error(404, title, { kind: 'not_found' });

export const invalidParameter = (title: string): V2Error => new V2Error(422, title, { kind: 'invalid_parameter' });

/** The kind of a write NerdGraph refused in its payload: the only write failure that means "not written". */
export const WRITE_REFUSED = 'write_refused';

export const writeRefused = (status: V2Status, title: string, messages?: readonly string[]): V2Error =>
  new V2Error(status, title, { kind: WRITE_REFUSED, ...(messages ? { messages } : {}) });
