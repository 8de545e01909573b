import type { Hono } from 'hono';
import type { AccountResolver } from '../caller/accounts.ts';
import type { GatewayContext, GatewayEnv } from './context.ts';
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

/**
 * The translation: serves a /v2 request by its mapping's kind, from the route the routing step
 * resolved (src/routing/routing-step.ts; one compiled route table, src/v2/route-table.ts, so a
 * request is matched once by walking the table, not by trying every pattern). v2 puts the
 * format in a suffix, which Hono's path syntax cannot express; 404 and 405 answers stay v2-shaped.
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
    throw new V2Error(405, `Method ${c.req.method} is not allowed here`, { headers: { allow: route.allow.join(', ') }, kind: 'method' });
  }
  c.set('routeLabel', route.mapping.route);
  c.set('format', route.format);
  return { mapping: route.mapping, format: route.format };
}

export function registerV2Routes(
  app: Hono<GatewayEnv>,
  mappings: readonly Mapping[],
  shared: Omit<RouteDeps, 'mutations'> & { accounts: AccountResolver; identityOf: IdentityOf; publicBaseUrl: string | undefined },
): void {
  const deps: RouteDeps & typeof shared = { ...shared, mutations: new Set(mappings.flatMap((m) => (m.kind === 'write' ? [m.operation, ...(m.stepOperations ?? [])] : []))) };
  const runList = createListRunner(deps);
  const runShow = createShowRunner(deps);
  // One resolver, so the names and data routes of a host share its host directory.
  const resolveTarget = createTargetResolver(deps);
  const runMetricNames = createMetricNamesRunner(deps, resolveTarget);
  const runMetricData = createMetricDataRunner(deps, resolveTarget);
  const operations = createOperationRunners(deps);

  // The route was resolved once, by the routing step (src/routing/routing-step.ts).
  app.all('*', async (c, next) => {
    const route = c.get('route');
    if (route === undefined) return next();
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
        return runList(mapping, request);
      case 'entity-by-id':
        return runShow(mapping, request);
      case 'metric-names':
        return runMetricNames(mapping, request);
      case 'metric-data':
        return runMetricData(mapping, request);
      case 'read-plan':
        return operations.runReadPlan(mapping, request);
      case 'write':
        return operations.runWrite(mapping, request);
      case 'unsupported':
        return operations.runUnsupported(mapping);
    }
  });
}
