import { defineWriteMapping } from '../src/routes/mapping.ts';
import { LabelTitles, carries, parseLabelDelete, parseLabelKey, v2Label } from '../src/v2/labels.ts';
import { defineParams, param } from '../src/v2/param-schema.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { notFound } from '../src/v2/errors.ts';
import { LABEL_ASSUMPTIONS, LABEL_FIELDS, LABEL_GAPS, LABEL_WRITE_ASSUMPTIONS, LABEL_WRITE_GAPS } from './shared/label-notes.ts';
import { chainPerApplication, namedApplications, readTaggedApplications } from './shared/labels.ts';

const OPERATION = 'LabelRemove';

/** DELETE /v2/labels/{key}.{json,xml}: take the label off the given applications, or off all of them. */
export default defineWriteMapping({
  kind: 'write',
  id: 'labels.delete',
  method: 'DELETE',
  route: '/v2/labels/{key}.{format}',
  operation: OPERATION,
  summary: 'Delete a label: one read of the account\'s tagged applications, then one taggingDeleteTagValuesFromEntity per application carrying it (chained, each confirmed before the next)',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: LabelTitles.deleteUnconfirmed,
  parameters: defineParams({
    key: param.bodyField('{key} (path)', { fidelity: 'exact', note: '`Category:Name`, percent-encoded, split at the first colon; a key no application carries is a 404.' }),
    applications: param.bodyField('label.links.applications', {
      fidelity: 'approximate',
      note: 'Optional: the applications to take the label from (ids the account does not have: 422); without it, every application loses the label.',
    }),
  }),
  fields: LABEL_FIELDS('label'),
  knownGaps: [
    ...LABEL_GAPS,
    ...LABEL_WRITE_GAPS,
    { description: 'Only the tag value is removed (taggingDeleteTagValuesFromEntity): other values of the same tag key stay, as other labels of that category did in v2.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...LABEL_ASSUMPTIONS,
    ...LABEL_WRITE_ASSUMPTIONS,
    'The applications to remove come in the body as for PUT ({"label": {"links": {"applications": [...]}}}); the swagger names no body for DELETE.',
    'Named applications that do not carry the label are skipped; the answer is the label as it stands afterwards (links.applications empty once removed everywhere).',
  ],
  async plan(ctx) {
    const label = parseLabelKey(ctx.pathParams.key);
    if (!label) throw notFound(LabelTitles.notFound);
    const { applications } = parseLabelDelete(ctx.body);
    const apps = await readTaggedApplications(ctx);
    const carrying = [...apps.values()].filter((app) => carries(app, label)).sort((x, y) => x.id - y.id);
    if (carrying.length === 0) throw notFound(LabelTitles.notFound);
    const targets = applications === undefined ? carrying : namedApplications(apps, applications).filter((app) => carries(app, label));
    const removed = new Set(targets.map((app) => app.id));
    return chainPerApplication(
      targets,
      { operation: OPERATION, field: 'taggingDeleteTagValuesFromEntity', variablesOf: (app) => ({ guid: app.guid, tagValues: [{ key: label.category, value: label.name }] }) },
      () => ({ label: v2Label(label, carrying.filter((app) => !removed.has(app.id))) }),
    );
  },
});
