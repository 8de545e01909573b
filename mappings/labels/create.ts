import { defineWriteMapping, defineParams, param, XML_ASSUMPTION, V2Error } from '../../src/mapping-api.ts';
import { LABEL_ASSUMPTIONS, LABEL_FIELDS, LABEL_GAPS, LABEL_WRITE_ASSUMPTIONS, LABEL_WRITE_GAPS } from './label-notes.ts';
import { chainPerApplication, labelBodyKind, namedApplications, readTaggedApplications } from './labels.ts';
import { LabelTitles, MAX_LABEL_APPLICATIONS, carries, parseLabelCreate, v2Label } from './label-rules.ts';

const OPERATION = 'LabelAdd';

/** PUT /v2/labels.{json,xml}: create the label Category:Name and apply it to applications, as tags. */
export default defineWriteMapping({
  kind: 'write',
  id: 'labels.create',
  method: 'PUT',
  route: '/v2/labels.{format}',
  sample: { body: { json: { label: { category: 'Costs', name: '{call}', links: { applications: ['{reporting_app_id}'] } } } } },
  operation: OPERATION,
  summary: 'Create and apply a label: v2 validation, one read of the account\'s tagged applications, then one taggingAddTagsToEntity per named application (chained, each confirmed before the next)',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: LabelTitles.putUnconfirmed,
  parameters: defineParams({
    category: param.bodyField('label.category', { fidelity: 'exact', note: `Required; no ':'; at most 128 characters (NerdGraph's tag key limit); a system tag key is refused. The tag key.` }),
    name: param.bodyField('label.name', { fidelity: 'exact', note: 'Required; at most 256 characters (NerdGraph\'s tag value limit). The tag value.' }),
    applications: param.bodyField('label.links.applications', {
      fidelity: 'approximate',
      note: `Application ids (JSON: an array; XML and forms also one id or comma-separated text); at least one, at most ${MAX_LABEL_APPLICATIONS} (422 above, saying to send the rest in further requests); an id the account does not have is refused (422) before anything is written.`,
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
    'Every named application gets its mutation, even one the read says already carries the label (taggingAddTagsToEntity is idempotent, and the entity search may lag behind a recent write); the answer lists every application carrying it afterwards.',
  ],
  async plan(ctx) {
    const input = parseLabelCreate(ctx.body, labelBodyKind(ctx.bodyKind));
    if (input.applications.length === 0) throw new V2Error(422, LabelTitles.noApplications, { kind: 'invalid_label' });
    const apps = await readTaggedApplications(ctx);
    const named = namedApplications(apps, input.applications);
    const label = { category: input.category, name: input.name };
    // Every named application is written, whatever the read says it carries: a stale read
    // (index lag) must never turn into a 2xx with nothing sent. The read only builds the answer.
    return chainPerApplication(
      ctx,
      named,
      {
        operation: OPERATION,
        field: 'taggingAddTagsToEntity',
        variablesOf: (app) => ({ guid: app.guid, tags: [{ key: input.category, values: [input.name] }] }),
        change: (app) => ({ appId: app.id, ...label, op: 'add' }),
      },
      // Confirmed on every application written: the label as it stands now.
      () => ({ label: v2Label(label, [...[...apps.values()].filter((app) => carries(app, label)), ...named]) }),
    );
  },
});
