/**
 * The NerdGraph face's notification writes: aiNotificationsCreateDestination,
 * aiNotificationsCreateChannel, aiNotificationsDeleteChannel, aiWorkflowsCreateWorkflow,
 * aiWorkflowsUpdateWorkflow (deleteUnusedChannels) and aiWorkflowsDeleteWorkflow (deleteChannels),
 * answering problems in the payload's errors, as NerdGraph does.
 */
import type { SandboxRequestContext } from '../actor.ts';
import { forbidden } from '../nerdgraph-errors.ts';
import type { SandboxData } from '../model.ts';
import type { PropertyInput } from '../policy-workflows.ts';
import { channelView, destinationView, given, workflowView } from './fields.ts';
import { DESTINATION_OF, WORKFLOW_DESTINATION_TYPE, type DestinationSettings, type SandboxDestination } from './model.ts';
import { addChannel, addDestination, addWorkflow, deleteUnused, notificationsOf, removeChannel, removeWorkflow } from './store.ts';
interface PropertyArgument {
  key: string;
  value: string;
}

interface DestinationInput {
  name: string;
  type: string;
  properties: readonly PropertyArgument[];
  auth?: {
    type: string;
    basic?: { user: string; password: string } | null;
    token?: { token: string; prefix?: string | null } | null;
  } | null;
}

interface ChannelInput {
  destinationId: string;
  name: string;
  product: string;
  type: string;
  properties: readonly PropertyArgument[];
}

interface PredicateInput {
  attribute: string;
  operator: string;
  values: readonly string[];
}

interface FilterInput {
  name?: string | null;
  type: string;
  predicates: readonly PredicateInput[];
}

interface WorkflowInput {
  name?: string | null;
  workflowEnabled?: boolean | null;
  mutingRulesHandling?: string | null;
  destinationConfigurations?: ReadonlyArray<{ channelId: string; notificationTriggers?: readonly string[] | null; updateOriginalMessage?: boolean | null }> | null;
  issuesFilter?: FilterInput | null;
}

interface UpdateWorkflowInput extends Omit<WorkflowInput, 'issuesFilter'> {
  id: string;
  issuesFilter?: { filterInput: FilterInput; id?: string | null } | null;
}

/** The settings a workflow input's destinationConfigurations carry: what it sends replaces what was (a configuration without them: NerdGraph's defaults). */
function settingsOf(configurations: NonNullable<WorkflowInput['destinationConfigurations']>): Record<string, DestinationSettings> {
  const settings: Record<string, DestinationSettings> = {};
  for (const configuration of configurations) {
    const triggers = configuration.notificationTriggers ?? null;
    const update = configuration.updateOriginalMessage ?? null;
    if (triggers !== null || update !== null) settings[configuration.channelId] = { notificationTriggers: triggers === null ? null : [...triggers], updateOriginalMessage: update };
  }
  return settings;
}

const responseError = (type: string, description: string) => ({ __typename: 'AiNotificationsResponseError', type, description, details: description });

/** Properties a destination type needs. */
const REQUIRED_DESTINATION_PROPERTY: Record<string, string> = { EMAIL: 'email', WEBHOOK: 'url', SLACK_LEGACY: 'url', MOBILE_PUSH: 'userId' };

/** The notification mutation fields of one request, for graphql-js's rootValue (counted in graphql.ts). */
export function notificationMutationRoot(data: SandboxData, context: SandboxRequestContext, now: () => number): Record<string, (args: never) => unknown> {
  const store = notificationsOf(data);
  const visible = new Set(context.accountIds);
  const writable = (accountId: number): void => {
    if (!visible.has(accountId) || !data.accounts.some((account) => account.id === accountId)) throw forbidden(`You are not authorized to query account ${accountId}`);
  };
  const cleanProperties = (properties: readonly PropertyArgument[]): PropertyInput[] => properties.map((p) => ({ key: p.key, value: p.value }));

  /** Workflow validation shared by create and update: null when fine, else the payload error. */
  const workflowProblem = (accountId: number, input: WorkflowInput): { type: string; description: string } | null => {
    if (given(input.name) && input.name.trim() === '') return { type: 'VALIDATION_ERROR', description: 'name must not be blank' };
    for (const configuration of input.destinationConfigurations ?? []) {
      const channel = store.channels.find((c) => c.id === configuration.channelId && c.accountId === accountId);
      if (!channel) return { type: 'CHANNEL_NOT_FOUND', description: `Channel ${configuration.channelId} not found` };
      if (WORKFLOW_DESTINATION_TYPE[channel.type] === undefined) return { type: 'UNSUPPORTED_CHANNEL_TYPE', description: `Channels of type ${channel.type} cannot be used in a workflow` };
    }
    if (input.issuesFilter && input.issuesFilter.predicates.some((p) => p.attribute.trim() === '')) return { type: 'INVALID_PARAMETER', description: 'predicate attribute must not be blank' };
    return null;
  };

  return {
    aiNotificationsCreateDestination: ({ accountId, destination }: { accountId: number; destination: DestinationInput }) => {
      writable(accountId);
      if (destination.name.trim() === '') return { destination: null, error: responseError('INVALID_PARAMETER', 'name must not be blank') };
      const needed = REQUIRED_DESTINATION_PROPERTY[destination.type];
      if (needed !== undefined && !destination.properties.some((p) => p.key === needed && p.value.trim() !== '')) {
        return { destination: null, error: responseError('MISSING_PARAMETERS', `property ${needed} is required for ${destination.type} destinations`) };
      }
      const auth = destination.auth;
      let stored: SandboxDestination['auth'] = null;
      if (auth) {
        if (auth.type === 'BASIC' && auth.basic) stored = { type: 'BASIC', user: auth.basic.user, password: auth.basic.password };
        else if (auth.type === 'TOKEN' && auth.token) stored = { type: 'TOKEN', token: auth.token.token };
        else return { destination: null, error: responseError('INVALID_PARAMETER', `auth of type ${auth.type} needs its ${auth.type.toLowerCase()} credentials`) };
      }
      if (destination.type === 'PAGERDUTY_SERVICE_INTEGRATION' && stored?.type !== 'TOKEN') {
        return { destination: null, error: responseError('MISSING_PARAMETERS', 'a PagerDuty service integration needs a token') };
      }
      const created = addDestination(store, { accountId, name: destination.name, type: destination.type, properties: cleanProperties(destination.properties), auth: stored }, now());
      return { destination: destinationView(created), error: null };
    },

    aiNotificationsCreateChannel: ({ accountId, channel }: { accountId: number; channel: ChannelInput }) => {
      writable(accountId);
      const destination = store.destinations.find((d) => d.id === channel.destinationId && d.accountId === accountId);
      if (!destination) return { channel: null, error: responseError('INVALID_PARAMETER', `Destination ${channel.destinationId} not found`) };
      if (DESTINATION_OF[channel.type] !== destination.type) {
        return { channel: null, error: responseError('INVALID_PARAMETER', `A ${channel.type} channel needs a ${DESTINATION_OF[channel.type] ?? 'matching'} destination, not ${destination.type}`) };
      }
      if (channel.name.trim() === '') return { channel: null, error: responseError('INVALID_CHANNEL_NAME', 'name must not be blank') };
      const created = addChannel(store, { accountId, name: channel.name, type: channel.type, product: channel.product, destinationId: destination.id, properties: cleanProperties(channel.properties) }, now());
      return { channel: channelView(created), error: null };
    },

    aiNotificationsDeleteChannel: ({ accountId, channelId }: { accountId: number; channelId: string }) => {
      writable(accountId);
      const channel = store.channels.find((c) => c.id === channelId && c.accountId === accountId);
      if (!channel) return { ids: null, error: responseError('INVALID_PARAMETER', `Channel ${channelId} not found`) };
      removeChannel(store, channel, now());
      return { ids: [channel.id], error: null };
    },

    aiWorkflowsCreateWorkflow: ({ accountId, createWorkflowData: input }: { accountId: number; createWorkflowData: WorkflowInput & { name: string; mutingRulesHandling: string } }) => {
      writable(accountId);
      const problem = workflowProblem(accountId, input);
      if (problem) return { workflow: null, errors: [{ __typename: 'AiWorkflowsCreateResponseError', ...problem }] };
      const created = addWorkflow(
        store,
        {
          accountId,
          name: input.name,
          enabled: input.workflowEnabled ?? true,
          channelIds: [...new Set((input.destinationConfigurations ?? []).map((c) => c.channelId))],
          settings: settingsOf(input.destinationConfigurations ?? []),
          filterName: input.issuesFilter?.name ?? input.name,
          predicates: (input.issuesFilter?.predicates ?? []).map((p) => ({ attribute: p.attribute, operator: p.operator, values: [...p.values] })),
          mutingRulesHandling: input.mutingRulesHandling,
        },
        now(),
      );
      return { workflow: workflowView(store, created), errors: [] };
    },

    aiWorkflowsUpdateWorkflow: ({ accountId, deleteUnusedChannels, updateWorkflowData: input }: { accountId: number; deleteUnusedChannels: boolean; updateWorkflowData: UpdateWorkflowInput }) => {
      writable(accountId);
      const workflow = store.workflows.find((w) => w.id === input.id && w.accountId === accountId);
      if (!workflow) return { workflow: null, errors: [{ __typename: 'AiWorkflowsUpdateResponseError', type: 'INVALID_PARAMETER', description: `Workflow ${input.id} not found` }] };
      const filter = input.issuesFilter?.filterInput ?? null;
      const problem = workflowProblem(accountId, { ...input, issuesFilter: filter });
      if (problem) return { workflow: null, errors: [{ __typename: 'AiWorkflowsUpdateResponseError', ...problem }] };
      const before = workflow.channelIds;
      if (given(input.name)) workflow.name = input.name;
      if (given(input.workflowEnabled)) workflow.enabled = input.workflowEnabled;
      if (given(input.mutingRulesHandling)) workflow.mutingRulesHandling = input.mutingRulesHandling;
      if (given(input.destinationConfigurations)) {
        workflow.channelIds = [...new Set(input.destinationConfigurations.map((c) => c.channelId))];
        workflow.settings = settingsOf(input.destinationConfigurations);
      }
      if (filter) {
        workflow.predicates = filter.predicates.map((p) => ({ attribute: p.attribute, operator: p.operator, values: [...p.values] }));
        if (given(filter.name)) workflow.filterName = filter.name;
      }
      workflow.updatedAt = now();
      // NerdGraph's default: channels the workflow no longer uses are deleted with it.
      if (deleteUnusedChannels) deleteUnused(store, before.filter((id) => !workflow.channelIds.includes(id)), now());
      return { workflow: workflowView(store, workflow), errors: [] };
    },

    aiWorkflowsDeleteWorkflow: ({ accountId, deleteChannels, id }: { accountId: number; deleteChannels: boolean; id: string }) => {
      writable(accountId);
      const workflow = store.workflows.find((w) => w.id === id && w.accountId === accountId);
      if (!workflow) return { id: null, errors: [{ __typename: 'AiWorkflowsDeleteResponseError', type: 'INVALID_PARAMETER', description: `Workflow ${id} not found` }] };
      removeWorkflow(store, workflow);
      if (deleteChannels) deleteUnused(store, workflow.channelIds, now());
      return { id: workflow.id, errors: [] };
    },
  };
}
