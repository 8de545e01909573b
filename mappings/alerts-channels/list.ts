import { defineReadPlanMapping, pageOfList, defineParams, param } from '../../src/mapping-api.ts';
import {
  CHANNELS_PAGE_SIZE,
  CHANNEL_ASSUMPTIONS,
  DIRECTORY,
  MAX_DIRECTORY_PAGES,
  channelFields,
  channelGaps,
  policyIdsByChannel,
  readDirectory,
  v2Channel,
} from './notifications.ts';

const parameters = defineParams({ page: param.page({ fidelity: 'exact', note: `${CHANNELS_PAGE_SIZE} per page, ordered by id, v2 Link header.` }) });

/** GET /v2/alerts_channels.{json,xml}: notification channels with their destinations, policy links from workflows. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'alerts-channels.list',
  method: 'GET',
  route: '/v2/alerts_channels.{format}',
  v2Keys: {
    wrapper: 'channels',
    list: true,
    source: 'SHAPES §9 (Ch); SW ChannelResponseType; CG pkg/alerts/channels_test.go',
    paths: { id: 'int', name: 'string', type: 'string', configuration: 'object', links: 'object', 'links.policy_ids': 'int[]' },
  },
  operation: DIRECTORY,
  summary: 'List alert channels: aiNotifications channels and destinations and aiWorkflows workflows (all cursors walked in shared requests), paged locally',
  fidelity: 'approximate',
  parameters,
  fields: channelFields('channels[]'),
  knownGaps: [
    ...channelGaps('channels[]'),
    { description: `At most ${MAX_DIRECTORY_PAGES} NerdGraph pages of channels, destinations and workflows are read; an account with more shows the first ones only.` },
    {
      description:
        "Order: v2 listed channels by its own ids, which grew as channels were made; the gateway lists by the ids it derives from NerdGraph's, so which channels land on which page differs from v2's (every channel is on some page).",
    },
  ],
  assumptions: [...CHANNEL_ASSUMPTIONS],
  async load(ctx) {
    const { page } = parameters.parse(ctx.params);
    const directory = await readDirectory(ctx, { channels: true, destinations: true, workflows: true });
    const links = policyIdsByChannel(directory.workflows);
    const channels = directory.channels.map((channel) => v2Channel(channel, directory.destinations.get(channel.destinationId), links.get(channel.id) ?? []));
    return pageOfList(channels, { page, pageSize: CHANNELS_PAGE_SIZE, wrapperKey: 'channels', publicUrl: ctx.publicUrl });
  },
});
