import { z } from 'zod';
import { defineWriteMapping, parseAnswer, UpstreamError, notFound, writeRefused, NO_PARAMS, v2IdOf } from '../../src/mapping-api.ts';
import { CHANNEL_ASSUMPTIONS, channelById, channelFields, channelGaps, policyIdsByChannel, readDirectory, requireComplete, v2Channel } from './notifications.ts';
import { CHANNEL_TOP_LINKS, ChannelTitles } from './channel-config.ts';

const OPERATION = 'ChannelDelete';
const Deleted = z.object({
  aiNotificationsDeleteChannel: z.object({ ids: z.array(z.string()).nullable(), error: z.object({ description: z.string(), type: z.string() }).nullable() }),
});

/** DELETE /v2/alerts_channels/{channel_id}.{json,xml}: the channel whose derived id matches, one aiNotificationsDeleteChannel. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts-channels.delete',
  method: 'DELETE',
  route: '/v2/alerts_channels/{channel_id}.{format}',
  sample: { path: { channel_id: '{channel_to_delete_id}' } },
  operation: OPERATION,
  summary: 'Delete an alert channel: read the channels (to find the derived id) then one aiNotificationsDeleteChannel',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: 'The channel may have been deleted, but New Relic did not confirm it: list channels before retrying',
  parameters: NO_PARAMS,
  fields: [...channelFields('channel'), { field: 'links', fidelity: 'exact', source: "v2's template {channel.policy_ids}" }],
  knownGaps: [
    ...channelGaps('channel'),
    { description: 'The destination created with the channel is kept (v2 had no destinations); delete it in New Relic if no channel uses it.' },
    { description: 'Finding the channel reads every channel of the account (the derived id is not searchable): one request per 100 channels.' },
  ],
  assumptions: [
    ...CHANNEL_ASSUMPTIONS,
    'NerdGraph removes a deleted channel from the workflows that route to it (UNCONFIRMED; no probe: only a delete shows it, and the probe never writes; should it refuse with ENTITY_IN_USE, the answer is a 422 naming it and nothing was deleted).',
  ],
  async plan(ctx) {
    const channelId = v2IdOf(ctx.pathParams.channel_id ?? '', 'derived');
    if (channelId === undefined) throw notFound(ChannelTitles.notFound);
    const directory = requireComplete(await readDirectory(ctx, { channels: true, destinations: true, workflows: true }));
    const channel = channelById(directory, channelId);
    const shown = v2Channel(channel, directory.destinations.get(channel.destinationId), policyIdsByChannel(directory.workflows).get(channel.id) ?? []);
    return {
      variables: { accountId: ctx.accountId, channelId: channel.id },
      answer(payload) {
        const { ids, error } = parseAnswer(Deleted, payload, OPERATION).aiNotificationsDeleteChannel;
        if (error) throw writeRefused(422, `New Relic refused to delete the channel: ${error.type}: ${error.description.slice(0, 200)}`);
        // No error and no id: whether it was deleted is unknown (the runner answers the unconfirmed title).
        if (!ids?.includes(channel.id)) throw new UpstreamError('upstream_failure', 'aiNotificationsDeleteChannel confirmed no id');
        return { channel: shown, links: { ...CHANNEL_TOP_LINKS } };
      },
    };
  },
});
