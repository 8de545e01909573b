import { defineWriteMapping } from '../src/routes/mapping.ts';
import { LabelTitles, carries, parseLabelCreate, v2Label } from '../src/v2/labels.ts';
import { defineParams, param } from '../src/v2/param-schema.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { V2Error } from '../src/v2/errors.ts';
import { LABEL_ASSUMPTIONS, LABEL_FIELDS, LABEL_GAPS, LABEL_WRITE_ASSUMPTIONS, LABEL_WRITE_GAPS } from './shared/label-notes.ts';
import { chainPerApplication, namedApplications, readTaggedApplications } from './shared/labels.ts';

const OPERATION = 'LabelAdd';

/** PUT /v2/labels.{json,xml}: create the label Category:Name and apply it to applications, as tags. */
export default defineWriteMapping({
  kind: 'write',
  id: 'labels.create',
  method: 'PUT',
  route: '/v2/labels.{format}',
  operation: OPERATION,
  summary: 'Create and apply a label: v2 validation, one read of the account\'s tagged applications, then one taggingAddTagsToEntity per application (chained, each confirmed before the next)',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: LabelTitles.putUnconfirmed,
  parameters: defineParams({
    category: param.bodyField('label.category', { fidelity: 'exact', note: `Required; no ':'; at most 128 characters (NerdGraph's tag key limit); a system tag key is refused. The tag key.` }),
    name: param.bodyField('label.name', { fidelity: 'exact', note: 'Required; at most 256 characters (NerdGraph\'s tag value limit). The tag value.' }),
    applications: param.bodyField('label.links.applications', {
      fidelity: 'approximate',
      note: 'Application ids (an array, one id, or comma-separated text); at least one, at most 100; an id the account does not have is refused (422) before anything is written.',
    }),
    servers: param.bodyField('label.links.servers', { fidelity: 'unsupported', note: 'Refused (422) when not empty: Servers were retired and have no entity.' }),
  }),
  fields: LABEL_FIELDS('label'),
  knownGaps: [
    ...LABEL_GAPS,
    ...LABEL_WRITE_GAPS,
    {
      description:
        'A label without applications cannot be kept as a tag: the gateway refuses it (422, nothing written), where v2 created an empty label.',
    },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...LABEL_ASSUMPTIONS,
    ...LABEL_WRITE_ASSUMPTIONS,
    'Applications that already carry the label are not written again; the answer lists every application carrying it afterwards.',
  ],
  async plan(ctx) {
    const input = parseLabelCreate(ctx.body);
    if (input.applications.length === 0) throw new V2Error(422, LabelTitles.noApplications, { kind: 'invalid_label' });
    const apps = await readTaggedApplications(ctx);
    const named = namedApplications(apps, input.applications);
    const toWrite = named.filter((app) => !carries(app, input));
    const label = { category: input.category, name: input.name };
    return chainPerApplication(
      toWrite,
      { operation: OPERATION, field: 'taggingAddTagsToEntity', variablesOf: (app) => ({ guid: app.guid, tags: [{ key: input.category, values: [input.name] }] }) },
      // Confirmed on every application written: the label as it stands now.
      () => ({ label: v2Label(label, [...[...apps.values()].filter((app) => carries(app, label)), ...toWrite]) }),
    );
  },
});
