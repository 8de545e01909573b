import { z } from 'zod';
import { V2Error, writeRefused, UpstreamError, NO_PARAMS, defineWriteMapping, parseAnswer, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { applicationGuid } from '../common/application-ref.ts';
import { APPLICATION_ASSUMPTIONS, endUserApdexGap, readApplicationEntity, shownApplication } from './application.ts';
import { APPLICATION_TITLES } from '../../facts/v2-titles.ts';

/** DELETE /v2/applications/{id}.{json,xml}: only an application that stopped reporting (v2's 409 otherwise). */
const DeleteAnswer = z.object({ agentApplicationDelete: z.object({ success: z.boolean() }).nullable() });

export default defineWriteMapping({
  kind: 'write',
  id: 'applications.delete',
  method: 'DELETE',
  route: '/v2/applications/{id}.{format}',
  sample: { path: { id: '{silent_app_id}' } },
  operation: 'ApplicationDelete',
  summary: 'Delete an application: read it (404, or 409 while reporting), then one agentApplicationDelete',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: 'The application may have been deleted, but New Relic did not confirm it: read it before retrying',
  parameters: NO_PARAMS,
  fields: [{ field: 'application', fidelity: 'approximate', source: 'ApplicationByGuid read just before the delete' }],
  knownGaps: [
    endUserApdexGap('application'),
    { description: "The reporting check and the delete are two requests; an app that starts reporting in between is refused by NerdGraph, answered 422 with NerdGraph's reason." },
    {
      description:
        "The answer's links list every page of applicationInstancesV2, read before the delete; past the gateway's bound (20 pages or 10,000 instances) they list the first page only, rather than refusing the delete.",
    },
  ],
  assumptions: [XML_ASSUMPTION, ...APPLICATION_ASSUMPTIONS, 'NerdGraph refuses deleting a reporting application (its schema description says so); the error shape is unconfirmed: success false is answered 409, a GraphQL error 422 with its message.'],
  async plan(ctx) {
    const { guid } = applicationGuid(ctx, ctx.pathParams.id);
    // The entity first (the reporting check needs no later pages of instances), then the answer's
    // links, read before the app is gone; past the instance bound, the first page's.
    const read = await readApplicationEntity(ctx, guid);
    if (read.entity.reporting === true) throw new V2Error(409, APPLICATION_TITLES.stillReporting, { kind: 'still_reporting' });
    const body = await shownApplication(ctx, read, 'first-page');
    return {
      variables: { guid },
      answer: (payload) => {
        const result = parseAnswer(DeleteAnswer, payload, 'ApplicationDelete');
        // success: false is NerdGraph saying no; the v2 reason for a refused delete is reporting.
        if (result.agentApplicationDelete?.success === false) throw writeRefused(409, APPLICATION_TITLES.stillReporting);
        if (result.agentApplicationDelete?.success !== true) throw new UpstreamError('upstream_failure', 'ApplicationDelete: no result');
        return body;
      },
    };
  },
});
