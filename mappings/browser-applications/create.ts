import { z } from 'zod';
import { defineParams, param, defineWriteMapping, parseAnswer, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { createdAppName, idFromGuid } from '../common/created-app.ts';

const Created = z.object({
  agentApplicationCreateBrowser: z.object({
    guid: z.string(),
    name: z.string(),
    settings: z.object({ loaderScript: z.string().nullable().optional() }).nullable().optional(),
  }),
});

/** The key the loader script carries (`licenseKey:"…"`), v2's browser_monitoring_key. */
function monitoringKey(script: string): string | null {
  return /licenseKey\s*:\s*"([^"]+)"/.exec(script)?.[1] ?? null;
}

/** POST /v2/browser_applications.{json,xml}: a copy/paste browser app with the Lite loader. */
export default defineWriteMapping({
  kind: 'write',
  id: 'browser-applications.create',
  method: 'POST',
  route: '/v2/browser_applications.{format}',
  sample: { body: { json: { browser_application: { name: 'costs {call}' } } } },
  operation: 'BrowserApplicationCreate',
  summary: 'Create a browser application: one agentApplicationCreateBrowser with the Lite loader (as v2 made them)',
  fidelity: 'approximate',
  successStatus: 201,
  unconfirmedTitle: 'The browser application may have been created, but New Relic did not confirm it: check before retrying',
  parameters: defineParams({ name: param.bodyField('browser_application.name', { fidelity: 'exact', note: '1 to 255 characters.' }) }),
  fields: [
    { field: 'browser_application.id', fidelity: 'exact', source: 'the id in the new entity GUID' },
    { field: 'browser_application.name', fidelity: 'exact', source: 'name' },
    { field: 'browser_application.browser_monitoring_key', fidelity: 'approximate', source: 'the licenseKey inside settings.loaderScript' },
    { field: 'browser_application.loader_script', fidelity: 'exact', source: 'settings.loaderScript (Lite loader)' },
  ],
  knownGaps: [{ description: 'browser_monitoring_key is read out of the loader script; a script without a licenseKey gives null.' }],
  assumptions: [XML_ASSUMPTION, 'Success is 201.', 'The loader is LITE: v2 only ever returned the Lite loader script.'],
  async plan(ctx) {
    const name = createdAppName(ctx.body, ['browser_application']);
    return {
      variables: { accountId: ctx.accountId, name, settings: { loaderType: 'LITE' } },
      answer: (payload) => {
        const created = parseAnswer(Created, payload, 'BrowserApplicationCreate').agentApplicationCreateBrowser;
        const script = created.settings?.loaderScript ?? null;
        return {
          browser_application: {
            id: idFromGuid(created.guid),
            name: created.name,
            browser_monitoring_key: script === null ? null : monitoringKey(script),
            loader_script: script,
          },
        };
      },
    };
  },
});
