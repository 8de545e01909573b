/**
 * The sandbox's notification world, in NerdGraph's shape: destinations (where alerts go),
 * channels on them (what is sent), and workflows that route issues of alert policies to
 * channels. Both faces read and write it: the NerdGraph face as `aiNotifications` /
 * `aiWorkflows` (fields.ts, mutations.ts), the legacy face as REST v2's `alerts_channels` and
 * `alerts_policy_channels` (legacy/notifications.ts), so a write through either is seen by both.
 *
 * A policy is bound to channels by a workflow whose issues filter holds the predicate
 * `labels.policyIds EXACTLY_MATCHES [<policy id>]` (the attribute is UNCONFIRMED,
 * routes-next.md §5.5); workflows with other filters route nothing v2 can show.
 *
 * The store is generated on first use from the world (its accounts, their alert policies, the
 * generation time), from its own random stream, so adding it changed no other value, and two
 * sandboxes built alike hold the same channels with the same ids.
 *
 * Files: model.ts (the store's records, here), seed.ts (the generated store), store.ts (the
 * store of a world and the writes both faces apply), fields.ts (NerdGraph reads), mutations.ts
 * (NerdGraph writes); the legacy face is legacy/notifications.ts.
 */
import type { PropertyInput } from '../policy-workflows.ts';

export interface SandboxDestination {
  accountId: number;
  id: string;
  name: string;
  type: string;
  properties: PropertyInput[];
  /** Credentials as given; the NerdGraph face never shows the secret, only the legacy face does. */
  auth: { type: 'TOKEN'; token: string } | { type: 'BASIC'; user: string; password: string } | null;
  createdAt: number;
  updatedAt: number;
}

export interface SandboxChannel {
  accountId: number;
  id: string;
  name: string;
  type: string;
  product: string;
  destinationId: string;
  properties: PropertyInput[];
  active: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface Predicate {
  attribute: string;
  operator: string;
  values: string[];
}

export interface SandboxWorkflow {
  accountId: number;
  id: string;
  name: string;
  enabled: boolean;
  channelIds: string[];
  /**
   * Per channel, its destination configuration's settings when set (NerdGraph's
   * notificationTriggers, updateOriginalMessage); absent: NerdGraph's defaults (null). An
   * update's destinationConfigurations replace them with what it sends.
   */
  settings?: Record<string, DestinationSettings>;
  filterId: string;
  filterName: string;
  predicates: Predicate[];
  mutingRulesHandling: string;
  createdAt: number;
  updatedAt: number;
}

export interface DestinationSettings {
  notificationTriggers: string[] | null;
  updateOriginalMessage: boolean | null;
}

export interface SandboxNotifications {
  destinations: SandboxDestination[];
  channels: SandboxChannel[];
  workflows: SandboxWorkflow[];
  /** Behind the ids of created objects: the same sequence of writes gives the same ids. */
  sequence: number;
}
/** Channel type -> destination type, and which of them workflows accept (AiWorkflowsDestinationType). */
export const DESTINATION_OF: Record<string, string> = {
  EMAIL: 'EMAIL',
  SLACK_LEGACY: 'SLACK_LEGACY',
  SLACK: 'SLACK',
  WEBHOOK: 'WEBHOOK',
  PAGERDUTY_SERVICE_INTEGRATION: 'PAGERDUTY_SERVICE_INTEGRATION',
  PAGERDUTY_ACCOUNT_INTEGRATION: 'PAGERDUTY_ACCOUNT_INTEGRATION',
  MOBILE_PUSH: 'MOBILE_PUSH',
  JIRA_CLASSIC: 'JIRA',
  MICROSOFT_TEAMS: 'MICROSOFT_TEAMS',
};
export const WORKFLOW_DESTINATION_TYPE: Record<string, string> = {
  EMAIL: 'EMAIL',
  SLACK_LEGACY: 'SLACK_LEGACY',
  SLACK: 'SLACK',
  WEBHOOK: 'WEBHOOK',
  PAGERDUTY_SERVICE_INTEGRATION: 'PAGERDUTY_SERVICE_INTEGRATION',
  PAGERDUTY_ACCOUNT_INTEGRATION: 'PAGERDUTY_ACCOUNT_INTEGRATION',
  JIRA_CLASSIC: 'JIRA',
  MICROSOFT_TEAMS: 'MICROSOFT_TEAMS',
};
