import type { AccountResolver } from '../caller/accounts.ts';
import type { GatewayContext } from './context.ts';
import { answerError } from './error-answer.ts';
import { V2Error, notFound } from '../v2/errors.ts';
import { callerFrom, type IdentityOf } from '../caller/identity.ts';
import type { Mapping } from './mapping.ts';
import { isServedFormat, type ResolvedRoute } from './resolved-route.ts';
import type { V2Format } from '../v2/format.ts';
import { readFormBody } from '../v2/form-body.ts';
import { parseV2Params } from '../v2/params.ts';
import { createListRunner } from './entity-list.ts';
import { createShowRunner } from './entity-show.ts';
import { createMetricDataRunner } from './metric-data.ts';
import { createMetricNamesRunner } from './metric-names.ts';
import { createTargetResolver } from './timeslice-target.ts';
import { createOperationRunners } from './operations.ts';
import type { RouteDeps, RouteRequest } from './types.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

/**
 * The translation: serves a /v2 request by its mapping's kind, from the route resolved once
 * before it (by the routing step, src/routing/routing-step.ts, or by explain; one compiled route
 * table, src/v2/route-table.ts, so a request is matched once by walking the table, not by trying
 * every pattern). v2 puts the format in a suffix, which Hono's path syntax cannot express; 404
 * and 405 answers stay v2-shaped.
 */

const passthroughUnavailable = (): V2Error =>
  new V2Error(404, 'This v2 route is served only by passthrough to the legacy REST API, which is not configured', { kind: 'passthrough_unavailable' });

/**
 * The mapping that serves the route, or the v2 error that answers it: the format first, then
 * the method (the order the sandbox's legacy face follows too). Sets the route's label and format.
 */
function mappingToServe(c: GatewayContext, route: ResolvedRoute): { mapping: Mapping; format: V2Format } {
  if (route.template === undefined) throw notFound('Unknown v2 resource');
  if (!isServedFormat(route.format)) throw notFound(`Unknown format .${route.format}: use .json or .xml`);
  if (route.mapping === undefined) {
    c.set('routeLabel', route.template);
    throw new V2Error(405, REQUEST_RULE_TITLES.methodNotAllowed(c.req.method), { headers: { allow: route.allow.join(', ') }, kind: 'method' });
  }
  c.set('routeLabel', route.mapping.route);
  c.set('format', route.format);
  return { mapping: route.mapping, format: route.format };
}

/** What the translation needs, built once per app (src/app.ts): the runners, one per mapping kind, and their dependencies. */
export interface Translation {
  readonly deps: TranslationDeps;
  readonly runList: ReturnType<typeof createListRunner>;
  readonly runShow: ReturnType<typeof createShowRunner>;
  readonly runMetricNames: ReturnType<typeof createMetricNamesRunner>;
  readonly runMetricData: ReturnType<typeof createMetricDataRunner>;
  readonly operations: ReturnType<typeof createOperationRunners>;
}

type TranslationDeps = RouteDeps & { accounts: AccountResolver; identityOf: IdentityOf; publicBaseUrl: string | undefined };

export function createTranslation(mappings: readonly Mapping[], shared: Omit<TranslationDeps, 'mutations'>): Translation {
  const deps: TranslationDeps = { ...shared, mutations: new Set(mappings.flatMap((m) => (m.kind === 'write' ? [m.operation, ...(m.stepOperations ?? [])] : []))) };
  // One resolver, so the names and data routes of a host share its host directory.
  const resolveTarget = createTargetResolver(deps);
  return {
    deps,
    runList: createListRunner(deps),
    runShow: createShowRunner(deps),
    runMetricNames: createMetricNamesRunner(deps, resolveTarget),
    runMetricData: createMetricDataRunner(deps, resolveTarget),
    operations: createOperationRunners(deps),
  };
}

/**
 * The translation of one v2 request: its answer by its route's mapping, on its context. Called
 * with the route already resolved (never matched again here): by the routing step for a
 * caller's translated request (src/routing/routing-step.ts), by candidate mode in the caller's
 * context, and on a shadow request's own context (src/routes/shadow-translation.ts) for a
 * comparison's translation, a dry run and an explained request. Every failure is answered here
 * by the one error handler (v2-shaped, its fields on the context's log line), so each of them
 * gets the answer a caller would: it never rejects.
 */
export async function serveTranslation(translation: Translation, c: GatewayContext, route: ResolvedRoute): Promise<Response> {
  try {
    return await translate(translation, c, route);
  } catch (error) {
    return answerError(error, c);
  }
}

async function translate(translation: Translation, c: GatewayContext, route: ResolvedRoute): Promise<Response> {
  const { deps, operations } = translation;
  const { mapping, format } = mappingToServe(c, route);
  // Only reached when no migration modes are configured (createApp without `modes`): a
  // passthrough route has no translation to fall back on, whoever calls.
  if (mapping.kind === 'passthrough') throw passthroughUnavailable();

  const caller = callerFrom(c.req.raw.headers, deps.identityOf, c.env?.incoming?.socket.remoteAddress);
  const signal = c.get('signal');
  const accountId = await deps.accounts.resolve(caller, c.req.header('x-account-id'), signal);
  const url = new URL(c.req.url);
  const query = url.search.slice(1);
  const form = await readFormBody(c.req, c.env?.incoming);
  // Link URLs must carry every parameter, form-body ones included, or the next page
  // would be a page of another list (clients re-send only what the URL holds).
  const allParams = [query, form ?? ''].filter((text) => text !== '').join('&');
  const request: RouteRequest = {
    c,
    caller,
    accountId,
    params: parseV2Params(query, form),
    format,
    pathParams: route.pathParams,
    publicUrl: `${deps.publicBaseUrl ?? url.origin}${url.pathname}${allParams ? `?${allParams}` : ''}`,
    signal,
  };
  switch (mapping.kind) {
    case 'entity-search-list':
      return translation.runList(mapping, request);
    case 'entity-by-id':
      return translation.runShow(mapping, request);
    case 'metric-names':
      return translation.runMetricNames(mapping, request);
    case 'metric-data':
      return translation.runMetricData(mapping, request);
    case 'read-plan':
      return operations.runReadPlan(mapping, request);
    case 'write':
      return operations.runWrite(mapping, request);
    case 'unsupported':
      return operations.runUnsupported(mapping);
  }
}
