/**
 * The generated notification store (model.ts): per account, destinations and channels of
 * every type v2 shows (and two it cannot), and workflows binding the first alert policies to
 * channels by the predicate `labels.policyIds EXACTLY_MATCHES [<policy id>]`
 * (policy-workflows.ts; the attribute is UNCONFIRMED, routes-next.md §5.5). Drawn from its own
 * random stream, so adding it changed no other value of the world.
 */
import { createRandom } from '../world/draws.ts';
import { fnv1a32 } from '../ids.ts';
import type { SandboxData } from '../model.ts';
import { POLICY_PREDICATE, workflowNameForPolicy as policyWorkflowName, type PropertyInput } from '../policy-workflows.ts';
import { DESTINATION_OF, type SandboxChannel, type SandboxDestination, type SandboxNotifications } from './model.ts';
/** Mixed into the stream's seed so notifications draw from their own stream. */
const NOTIFICATIONS_STREAM = 0x0c4a_77e1;
/** Channels v2 can show, per account: the primary account's fill three pages of 50 and part of a fourth. */
export const CHANNEL_COUNTS = { primary: 160, other: 8 } as const;
/** Policies of the primary account bound to channels by a workflow (the first ones, some skipped). */
const BOUND_POLICIES = 80;
type Random = () => number;
const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

function uuidOf(random: Random): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const TEAMS = ['Checkout', 'Billing', 'Platform', 'Search', 'Data', 'Storefront', 'Mobile', 'Payments'];
const AWKWARD_NAMES = ['Ops "pager" rota', "O'Brien <on-call> & friends", 'Café ünïcode 🚨 alerts', 'Back\\slash/route'];

export function generateNotifications(data: SandboxData): SandboxNotifications {
  const seed = fnv1a32(`${data.generatedAt}|${data.accounts.map((a) => a.id).join(',')}`) ^ NOTIFICATIONS_STREAM;
  const random = createRandom(seed >>> 0);
  const store: SandboxNotifications = { destinations: [], channels: [], workflows: [], sequence: 0 };
  const DAY = 86_400_000;
  const at = (): number => data.generatedAt - Math.floor(random() * 400 * DAY);
  data.accounts.forEach((account, accountIndex) => {
    const primary = accountIndex === 0;
    const count = primary ? CHANNEL_COUNTS.primary : CHANNEL_COUNTS.other;
    const mine: SandboxChannel[] = [];
    const add = (type: string, name: string, destinationProperties: PropertyInput[], channelProperties: PropertyInput[], auth: SandboxDestination['auth']): SandboxChannel => {
      const createdAt = at();
      const destination: SandboxDestination = { accountId: account.id, id: uuidOf(random), name, type: DESTINATION_OF[type] as string, properties: destinationProperties, auth, createdAt, updatedAt: createdAt };
      store.destinations.push(destination);
      const channel: SandboxChannel = {
        accountId: account.id,
        id: uuidOf(random),
        name,
        type,
        product: 'IINT',
        destinationId: destination.id,
        properties: channelProperties,
        active: random() < 0.95,
        createdAt,
        updatedAt: createdAt,
      };
      store.channels.push(channel);
      mine.push(channel);
      return channel;
    };
    for (let i = 0; i < count; i++) {
      const team = pick(random, TEAMS);
      const name = primary && i < AWKWARD_NAMES.length ? (AWKWARD_NAMES[i] as string) : `${team} ${i + 1}`;
      const roll = random();
      if (roll < 0.35) {
        add('EMAIL', name, [{ key: 'email', value: `${team.toLowerCase()}@example.com${random() < 0.4 ? `,oncall-${i}@example.com` : ''}` }], [{ key: 'includeJsonAttachment', value: random() < 0.3 ? 'true' : 'false' }], null);
      } else if (roll < 0.55) {
        add('SLACK_LEGACY', name, [{ key: 'url', value: `https://hooks.slack.com/services/T0${i}/B0${i}/sandbox${i}` }], random() < 0.7 ? [{ key: 'channel', value: `#${team.toLowerCase()}-alerts` }] : [], null);
      } else if (roll < 0.75) {
        const auth: SandboxDestination['auth'] = random() < 0.4 ? { type: 'BASIC', user: `hook-${i}`, password: `sandbox-secret-${i}` } : null;
        const props: PropertyInput[] = [{ key: 'payloadType', value: 'application/json' }];
        if (random() < 0.5) props.push({ key: 'payload', value: JSON.stringify({ account_id: '$ACCOUNT_ID', condition: '$CONDITION_NAME' }) });
        if (random() < 0.3) props.push({ key: 'headers', value: JSON.stringify({ 'X-Team': team }) });
        add('WEBHOOK', name, [{ key: 'url', value: `https://hooks.example.com/${team.toLowerCase()}/${i}` }], props, auth);
      } else if (roll < 0.88) {
        add('PAGERDUTY_SERVICE_INTEGRATION', name, [], [], { type: 'TOKEN', token: `pd-sandbox-key-${i}` });
      } else {
        add('MOBILE_PUSH', name, [{ key: 'userId', value: String(2_680_000 + i) }], [], null);
      }
    }
    // Channels v2 has no type for: NerdGraph lists them, v2 never shows them.
    const others = primary
      ? [add('JIRA_CLASSIC', 'Jira tickets', [{ key: 'url', value: 'https://example.atlassian.net' }], [{ key: 'project', value: 'OPS' }], null), add('MICROSOFT_TEAMS', 'Teams room', [], [], null)]
      : [];
    const routable = mine.filter((channel) => channel.type !== 'MOBILE_PUSH' && !others.includes(channel));
    const policies = data.alerts.policies.filter((policy) => policy.accountId === account.id).slice(0, primary ? BOUND_POLICIES : 4);
    for (const [index, policy] of policies.entries()) {
      if (index % 4 === 3) continue; // some policies have no channel
      const bound = new Set<string>();
      const wanted = 1 + Math.floor(random() * 3);
      while (bound.size < wanted && routable.length > 0) bound.add(pick(random, routable).id);
      const createdAt = at();
      const channelIds = [...bound];
      store.workflows.push({
        accountId: account.id,
        id: uuidOf(random),
        name: policyWorkflowName(policy.id),
        enabled: true,
        channelIds,
        // Every other policy's first channel notifies on activation and close only, without editing its first message.
        ...(index % 2 === 0 && channelIds[0] !== undefined && { settings: { [channelIds[0]]: { notificationTriggers: ['ACTIVATED', 'CLOSED'], updateOriginalMessage: false } } }),
        filterId: uuidOf(random),
        filterName: `policy ${policy.id}`,
        predicates: [{ attribute: POLICY_PREDICATE.attribute, operator: POLICY_PREDICATE.operator, values: [String(policy.id)] }],
        mutingRulesHandling: 'NOTIFY_ALL_ISSUES',
        createdAt,
        updatedAt: createdAt,
      });
    }
    if (primary) {
      // Workflows that route by something other than a policy: v2 shows nothing of them.
      for (const priority of ['CRITICAL', 'HIGH']) {
        const createdAt = at();
        store.workflows.push({
          accountId: account.id,
          id: uuidOf(random),
          name: `All ${priority.toLowerCase()} issues`,
          enabled: true,
          channelIds: [pick(random, routable).id, ...others.map((channel) => channel.id)],
          filterId: uuidOf(random),
          filterName: `priority ${priority}`,
          predicates: [{ attribute: 'priority', operator: 'EQUAL', values: [priority] }],
          mutingRulesHandling: 'DONT_NOTIFY_FULLY_MUTED_ISSUES',
          createdAt,
          updatedAt: createdAt,
        });
      }
    }
  });
  return store;
}
