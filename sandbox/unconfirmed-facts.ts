/**
 * How the NerdGraph face shows an APM app under the behaviours that stand for facts the gateway
 * takes as UNCONFIRMED (behaviours.ts: errorRateScale, instanceIdIsRealAgentId,
 * metricHostIsInstanceHost). With the defaults the model's app itself is shown. Otherwise a copy: the legacy face and NRQL keep
 * reading the model, so a test can show `npm run probe` (src/probe/) refuting the fact.
 */
import type { SandboxBehaviours } from './behaviours.ts';
import type { SandboxApp } from './model.ts';

/**
 * details.id of an instance when it is not the realAgentId its Metric rows carry: another
 * number of the same size (agent ids are large integers; sources in behaviours.ts).
 */
export const OTHER_INSTANCE_ID_OFFSET = 700_000_000;

/** details.host when it is not the Metric rows' `host`: the same machine, spelt another way. */
export const OTHER_HOST_SUFFIX = '.internal';

export function nerdgraphFactsOf(app: SandboxApp, behaviours: Pick<SandboxBehaviours, 'errorRateScale' | 'instanceIdIsRealAgentId' | 'metricHostIsInstanceHost'>): SandboxApp {
  const fraction = behaviours.errorRateScale === 'fraction' && app.summary !== null;
  const otherIds = !behaviours.instanceIdIsRealAgentId;
  const otherHosts = !behaviours.metricHostIsInstanceHost;
  if (!fraction && !otherIds && !otherHosts) return app;
  return {
    ...app,
    ...(fraction && app.summary && { summary: { ...app.summary, errorRate: app.summary.errorRate / 100 } }),
    ...((otherIds || otherHosts) && {
      hosts: app.hosts.map((host) => ({
        ...host,
        name: otherHosts ? `${host.name}${OTHER_HOST_SUFFIX}` : host.name,
        instances: otherIds ? host.instances.map((instance) => ({ ...instance, id: instance.id + OTHER_INSTANCE_ID_OFFSET })) : host.instances,
      })),
    }),
  };
}
