import { defineWriteMapping, defineParams, param, XML_ASSUMPTION, V2Error, notFound } from '../../src/mapping-api.ts';
import { LABEL_ASSUMPTIONS, LABEL_FIELDS, LABEL_GAPS, LABEL_WRITE_ASSUMPTIONS, LABEL_WRITE_GAPS } from './label-notes.ts';
import { chainPerApplication, labelBodyKind, namedApplications, readTaggedApplications } from './labels.ts';
import { LabelTitles, MAX_LABEL_APPLICATIONS, carries, isLabelTagKey, parseLabelDelete, parseLabelKey, v2Label } from './label-rules.ts';

const OPERATION = 'LabelRemove';

/** DELETE /v2/labels/{key}.{json,xml}: take the label off the given applications, or off all of them. */
export default defineWriteMapping({
  kind: 'write',
  id: 'labels.delete',
  method: 'DELETE',
  route: '/v2/labels/{key}.{format}',
  // Deletes the labels the create's sample made.
  sample: { path: { key: 'Costs:{call}' }, after: 'labels.create' },
  operation: OPERATION,
  summary: 'Delete a label: one read of the account\'s tagged applications, then one taggingDeleteTagValuesFromEntity per named application, or per application carrying it (chained, each confirmed before the next)',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: LabelTitles.deleteUnconfirmed,
  parameters: defineParams({
    key: param.bodyField('{key} (path)', { fidelity: 'exact', note: '`Category:Name`, percent-encoded, split at the first colon; a key no application carries, or whose category is a tag New Relic sets itself (language, account, nr.*, ...), is a 404.' }),
    applications: param.bodyField('label.links.applications', {
      fidelity: 'approximate',
      note: `Optional: the applications to take the label from, at most ${MAX_LABEL_APPLICATIONS} (ids the account does not have: 422); without it, every application loses the label, when it is on at most ${MAX_LABEL_APPLICATIONS} (422 above: name them in batches).`,
    }),
  }),
  fields: LABEL_FIELDS('label'),
  knownGaps: [
    ...LABEL_GAPS,
    ...LABEL_WRITE_GAPS,
    { description: 'Only the tag value is removed (taggingDeleteTagValuesFromEntity): other values of the same tag key stay, as other labels of that category did in v2.' },
    {
      description: `Without applications in the body, a label on more than ${MAX_LABEL_APPLICATIONS} applications is not removed (422, nothing written): one mutation per application would outrun the request's deadline. Name the applications in the body, up to ${MAX_LABEL_APPLICATIONS} per request, until it is gone; v2 removed it in one call.`,
    },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...LABEL_ASSUMPTIONS,
    ...LABEL_WRITE_ASSUMPTIONS,
    'The applications to remove come in the body as for PUT ({"label": {"links": {"applications": [...]}}}); the swagger names no body for DELETE.',
    'Every named application gets its mutation, even one the read says does not carry the label (removing an absent tag value is no error in NerdGraph, and the entity search may lag behind a recent write); the answer is the label as it stands afterwards (links.applications empty once removed everywhere).',
    'A category that is a tag New Relic sets itself (language, account, nr.*, ...) names no label: 404, as GET never lists it.',
  ],
  async plan(ctx) {
    const label = parseLabelKey(ctx.pathParams.key);
    // System tags (language, account, nr.*) are never labels: GET does not list them.
    if (!label || !isLabelTagKey(label.category)) throw notFound(LabelTitles.notFound);
    const { applications } = parseLabelDelete(ctx.body, labelBodyKind(ctx.bodyKind));
    const apps = await readTaggedApplications(ctx);
    const carrying = [...apps.values()].filter((app) => carries(app, label)).sort((x, y) => x.id - y.id);
    if (carrying.length === 0) throw notFound(LabelTitles.notFound);
    if (applications === undefined && carrying.length > MAX_LABEL_APPLICATIONS) {
      throw new V2Error(422, LabelTitles.tooManyCarrying(carrying.length), { kind: 'invalid_label' });
    }
    // Named applications are all written, whatever the read says they carry: a stale read must
    // never turn into a 2xx with nothing sent. The read only builds the answer and the 404.
    const targets = applications === undefined ? carrying : namedApplications(apps, applications);
    const removed = new Set(targets.map((app) => app.id));
    return chainPerApplication(
      ctx,
      targets,
      {
        operation: OPERATION,
        field: 'taggingDeleteTagValuesFromEntity',
        variablesOf: (app) => ({ guid: app.guid, tagValues: [{ key: label.category, value: label.name }] }),
        change: (app) => ({ appId: app.id, category: label.category, name: label.name, op: 'remove' }),
      },
      () => ({ label: v2Label(label, carrying.filter((app) => !removed.has(app.id))) }),
    );
  },
});
