import { z } from 'zod';
import { defineParams, param, defineWriteMapping, parseAnswer, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { createdAppName, idFromGuid } from '../common/created-app.ts';

const Created = z.object({ agentApplicationCreateMobile: z.object({ guid: z.string(), name: z.string() }) });

/** POST /v2/mobile_applications.{json,xml}: agentApplicationCreateMobile. */
export default defineWriteMapping({
  kind: 'write',
  id: 'mobile-applications.create',
  method: 'POST',
  route: '/v2/mobile_applications.{format}',
  sample: { body: { json: { mobile_application: { name: 'costs {call}' } } } },
  operation: 'MobileApplicationCreate',
  summary: 'Create a mobile application: one agentApplicationCreateMobile in the resolved account',
  fidelity: 'approximate',
  successStatus: 201,
  unconfirmedTitle: 'The mobile application may have been created, but New Relic did not confirm it: check before retrying',
  parameters: defineParams({ name: param.bodyField('mobile_application.name', { fidelity: 'exact', note: '1 to 255 characters; `application.name` is accepted too.' }) }),
  fields: [
    { field: 'application.id', fidelity: 'exact', source: 'the id in the new entity GUID' },
    { field: 'application.name', fidelity: 'exact', source: 'name' },
    { field: 'application.health_status / reporting', fidelity: 'exact', source: 'unknown / false: a new app has reported nothing' },
  ],
  knownGaps: [{ description: 'The application token is not shown (v2 never showed one); read it in the New Relic UI or through NerdGraph.' }],
  assumptions: [XML_ASSUMPTION, 'The request body is {"mobile_application": {"name"}} (v2\'s body is undocumented); the answer uses v2\'s mobile wrapper `application`.', 'Success is 201.'],
  async plan(ctx) {
    const name = createdAppName(ctx.body, ['mobile_application', 'application']);
    return {
      variables: { accountId: ctx.accountId, name },
      answer: (payload) => {
        const created = parseAnswer(Created, payload, 'MobileApplicationCreate').agentApplicationCreateMobile;
        return { application: { id: idFromGuid(created.guid), name: created.name, health_status: 'unknown', reporting: false } };
      },
    };
  },
});
