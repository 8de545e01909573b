import { z } from 'zod';
import { V2Error } from '../v2/errors.ts';
import { METHODS } from './explanation.ts';

/** The /bridge/explain parameters: the v2 request to explain, its method and its body. */

/** Long enough for a metric-data request naming 100 metrics; a URL is bounded below that anyway. */
export const MAX_REQUEST_CHARS = 8192;
export const MAX_BODY_CHARS = 16_384;


/** Control characters and a fragment have no place in a request line. */
const isRequestText = (text: string): boolean => ![...text].some((ch) => ch === '#' || ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
export const V2_TARGET = /^(?:\/v2\/|\/deployments\.(?:json|xml)(?:\?|$))/;

const ExplainQuery = z.object({
  request: z
    .string({ error: 'Invalid parameter request: give a v2 path and query, e.g. request=/v2/applications.json' })
    .min(1, 'Invalid parameter request: give a v2 path and query, e.g. request=/v2/applications.json')
    .max(MAX_REQUEST_CHARS, `Invalid parameter request: at most ${MAX_REQUEST_CHARS} characters`)
    .refine(isRequestText, 'Invalid parameter request: control characters and # are not accepted')
    .regex(V2_TARGET, 'Invalid parameter request: must start with /v2/ (or be /deployments.json or /deployments.xml)'),
  method: z
    .string()
    .transform((m) => m.trim().toUpperCase())
    .pipe(z.enum(METHODS, { error: 'Invalid parameter method: expected GET, POST, PUT or DELETE' }))
    .default('GET'),
  body: z.string().max(MAX_BODY_CHARS, `Invalid parameter body: at most ${MAX_BODY_CHARS} characters`).optional(),
});

export type ExplainInput = z.output<typeof ExplainQuery>;

function single(values: string[] | undefined, name: string): string | undefined {
  if (values === undefined || values.length === 0) return undefined;
  if (values.length > 1) throw new V2Error(422, `Invalid parameter ${name}: give it once`, { kind: 'invalid_parameter' });
  return values[0];
}

/** The explain parameters, validated; V2Error 422/400 on bad input. */
export function parseExplainQuery(query: Record<string, string[]>): ExplainInput {
  const result = ExplainQuery.safeParse({
    request: single(query.request, 'request'),
    method: single(query.method, 'method'),
    body: single(query.body, 'body'),
  });
  if (!result.success) {
    throw new V2Error(422, result.error.issues[0]?.message ?? 'Invalid parameters', { kind: 'invalid_parameter' });
  }
  const input = result.data;
  if (input.body !== undefined) {
    if (input.method !== 'POST' && input.method !== 'PUT') {
      throw new V2Error(422, 'Invalid parameter body: only a POST or PUT request has a body', { kind: 'invalid_parameter' });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.body);
    } catch {
      throw new V2Error(400, 'Invalid parameter body: expected JSON text', { kind: 'invalid_parameter' });
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new V2Error(422, 'Invalid parameter body: expected a JSON object such as {"deployment":{"revision":"v1"}}', { kind: 'invalid_parameter' });
    }
  }
  return input;
}
