import { ID_PATTERN } from '../../src/v2/params.ts';
import { z } from 'zod';
import { syntheticHostId } from '../../src/v2/ids.ts';

/**
 * An APM application's agent instances as NerdGraph lists them
 * (`ApmApplicationEntity.applicationInstancesV2`, fragment ApplicationInstanceFields), and the
 * v2 hosts built from them. REST v2 had host ids; NerdGraph has host names only, so a host id
 * is syntheticHostId(appId, host name): the same on every call, process and replica, with no
 * state (rest-v2.md §6). Instance ids are the agent instance ids (`details.id`).
 */
export const ApplicationInstance = z.object({
  details: z.object({
    id: z.string(),
    host: z.string(),
    instanceName: z.string().nullable().optional(),
    language: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
  }),
});
export type ApplicationInstance = z.infer<typeof ApplicationInstance>;

export interface AppInstance {
  /** The v2 instance id. */
  id: number;
  host: string;
  instanceName: string | null;
  /** The port of a `host:port` instance name (Java agents name instances so), else 0 as v2 showed. */
  port: number;
}

export interface AppHost {
  /** The v2 host id: syntheticHostId(appId, name). */
  id: number;
  name: string;
  instances: AppInstance[];
}

const PORT_SUFFIX = /:(\d{1,5})$/;

export function portOf(instanceName: string | null | undefined): number {
  const port = instanceName ? Number(PORT_SUFFIX.exec(instanceName)?.[1] ?? 0) : 0;
  return port <= 65_535 ? port : 0;
}

/** Instances with a usable numeric id, deduplicated, in id order. */
export function appInstances(instances: readonly ApplicationInstance[]): AppInstance[] {
  const byId = new Map<number, AppInstance>();
  for (const { details } of instances) {
    const id = Number(details.id);
    if (!ID_PATTERN.test(details.id) || byId.has(id)) continue;
    byId.set(id, { id, host: details.host, instanceName: details.instanceName ?? null, port: portOf(details.instanceName) });
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** The app's hosts: its instances grouped by host name, in host id order. */
export function appHosts(appId: number, instances: readonly AppInstance[]): AppHost[] {
  const byName = new Map<string, AppHost>();
  for (const instance of instances) {
    let host = byName.get(instance.host);
    if (!host) {
      host = { id: syntheticHostId(appId, instance.host), name: instance.host, instances: [] };
      byName.set(instance.host, host);
    }
    host.instances.push(instance);
  }
  return [...byName.values()].sort((a, b) => a.id - b.id);
}

/** The id lists of an application's `links`, as list and show both send them. */
export interface AppLinkIds {
  instances: number[];
  hosts: number[];
}

/** links from NerdGraph's instances (show: applicationInstancesV2). */
export function linkIdsFromInstances(appId: number, instances: readonly ApplicationInstance[]): AppLinkIds {
  const valid = appInstances(instances);
  return { instances: valid.map((instance) => instance.id), hosts: appHosts(appId, valid).map((host) => host.id) };
}

/**
 * links from NRQL's uniques(host) and uniques(realAgentId) of the app (list pages): the same
 * ids as linkIdsFromInstances gives for the same instances (host ids are syntheticHostId).
 */
export function linkIdsFromNames(appId: number, hostNames: readonly string[], agentIds: readonly (string | number)[]): AppLinkIds {
  const instances = [...new Set(agentIds.map(String).filter((id) => ID_PATTERN.test(id)).map(Number))].sort((a, b) => a - b);
  const hosts = [...new Set(hostNames)].map((name) => syntheticHostId(appId, name)).sort((a, b) => a - b);
  return { instances, hosts };
}
