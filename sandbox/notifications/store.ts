/**
 * A world's notification store (generated on first use: seed.ts) and the writes both faces
 * apply, each after its own validation: the NerdGraph face (mutations.ts) and the legacy face
 * (legacy/notifications.ts), so a write through either is seen by both.
 */
import { fnv1a32 } from '../ids.ts';
import type { SandboxData } from '../model.ts';
import { POLICY_PREDICATE } from '../policy-workflows.ts';
import type { SandboxChannel, SandboxDestination, SandboxNotifications, SandboxWorkflow } from './model.ts';
import { generateNotifications } from './seed.ts';

export type { DestinationSettings, Predicate, SandboxChannel, SandboxDestination, SandboxNotifications, SandboxWorkflow } from './model.ts';

const stores = new WeakMap<SandboxData, SandboxNotifications>();

/** The world's notification store (generated on first use). */
export function notificationsOf(data: SandboxData): SandboxNotifications {
  let store = stores.get(data);
  if (!store) stores.set(data, (store = generateNotifications(data)));
  return store;
}
/** A new id: the same sequence of writes on two sandboxes built alike gives the same ids. */
export function newId(store: SandboxNotifications, kind: string): string {
  store.sequence += 1;
  const hex = [1, 2, 3, 4].map((part) => fnv1a32(`${kind}|${store.sequence}|${part}`).toString(16).padStart(8, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-9${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function addDestination(store: SandboxNotifications, fields: Omit<SandboxDestination, 'id' | 'createdAt' | 'updatedAt'>, now: number): SandboxDestination {
  const destination: SandboxDestination = { ...fields, id: newId(store, 'destination'), createdAt: now, updatedAt: now };
  store.destinations.push(destination);
  return destination;
}

export function addChannel(store: SandboxNotifications, fields: Omit<SandboxChannel, 'id' | 'createdAt' | 'updatedAt' | 'active'>, now: number): SandboxChannel {
  const channel: SandboxChannel = { ...fields, id: newId(store, 'channel'), active: true, createdAt: now, updatedAt: now };
  store.channels.push(channel);
  return channel;
}

/** Removes a channel, and drops it from every workflow that routes to it. */
export function removeChannel(store: SandboxNotifications, channel: SandboxChannel, now: number): void {
  store.channels.splice(store.channels.indexOf(channel), 1);
  for (const workflow of store.workflows) {
    if (workflow.channelIds.includes(channel.id)) {
      workflow.channelIds = workflow.channelIds.filter((id) => id !== channel.id);
      workflow.updatedAt = now;
    }
  }
}

export function addWorkflow(store: SandboxNotifications, fields: Omit<SandboxWorkflow, 'id' | 'filterId' | 'createdAt' | 'updatedAt'>, now: number): SandboxWorkflow {
  const workflow: SandboxWorkflow = { ...fields, id: newId(store, 'workflow'), filterId: newId(store, 'filter'), createdAt: now, updatedAt: now };
  store.workflows.push(workflow);
  return workflow;
}

export function removeWorkflow(store: SandboxNotifications, workflow: SandboxWorkflow): void {
  store.workflows.splice(store.workflows.indexOf(workflow), 1);
}

/** Channels no workflow routes to any more, among `candidates`, deleted (NerdGraph's deleteUnusedChannels / deleteChannels). */
export function deleteUnused(store: SandboxNotifications, candidates: readonly string[], now: number): void {
  for (const id of candidates) {
    if (store.workflows.some((workflow) => workflow.channelIds.includes(id))) continue;
    const channel = store.channels.find((c) => c.id === id);
    if (channel) removeChannel(store, channel, now);
  }
}

/** The policy ids each channel is bound to, by channel id (inverting the workflows' policy predicates). */
export function policyIdsByChannel(store: SandboxNotifications, accountId: number): Map<string, number[]> {
  const byChannel = new Map<string, Set<number>>();
  for (const workflow of store.workflows) {
    // A disabled workflow notifies nobody: it links no policy.
    if (workflow.accountId !== accountId || !workflow.enabled) continue;
    const policies = workflow.predicates
      .filter((p) => p.attribute === POLICY_PREDICATE.attribute && p.operator === POLICY_PREDICATE.operator)
      .flatMap((p) => p.values)
      .filter((value) => /^[1-9]\d{0,14}$/.test(value.trim()))
      .map((value) => Number(value.trim()));
    for (const channelId of workflow.channelIds) {
      let set = byChannel.get(channelId);
      if (!set) byChannel.set(channelId, (set = new Set()));
      for (const policy of policies) set.add(policy);
    }
  }
  return new Map([...byChannel].map(([id, set]) => [id, [...set].sort((a, b) => a - b)]));
}
