import { defineReadPlanMapping, pageOfList, defineParams, param, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { LABEL_ASSUMPTIONS, LABEL_FIELDS, LABEL_GAPS } from './label-notes.ts';
import { TAGGED_ENTITIES_OPERATION, readTaggedApplications } from './labels.ts';
import { LABELS_PAGE_SIZE, aggregateLabels } from './label-rules.ts';

const parameters = defineParams({
  page: param.page({ fidelity: 'approximate', note: `${LABELS_PAGE_SIZE} labels per page (v2's size is UNCONFIRMED; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing), by category then name, v2 Link header.` }),
});

/** GET /v2/labels.{json,xml}: every label (user tag key:value) of the account's APM applications. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'labels.list',
  method: 'GET',
  route: '/v2/labels.{format}',
  v2Keys: {
    wrapper: 'labels',
    list: true,
    source: 'SHAPES §10 (Lb); SW LabelResponseType',
    paths: {
      key: 'string',
      category: 'string',
      name: 'string',
      'application_health_status.green': 'int[]',
      'application_health_status.orange': 'int[]',
      'application_health_status.red': 'int[]',
      'application_health_status.gray': 'int[]',
      'server_health_status.green': 'int[]',
      'server_health_status.orange': 'int[]',
      'server_health_status.red': 'int[]',
      'server_health_status.gray': 'int[]',
      'origins.apm': 'int[]',
      'origins.synthetics': 'int[]',
      'origins.agents': 'int[]',
      'links.applications': 'int[]',
      'links.servers': 'int[]',
    },
  },
  operation: TAGGED_ENTITIES_OPERATION,
  summary: 'List labels: page through the APM applications with their tags (entity search), aggregate per tag key and value, page locally',
  fidelity: 'approximate',
  parameters,
  fields: LABEL_FIELDS('labels[]'),
  knownGaps: [
    ...LABEL_GAPS,
    { description: `v2's page size for labels is not documented: the gateway pages ${LABELS_PAGE_SIZE} labels, ordered by category then name.` },
  ],
  assumptions: [XML_ASSUMPTION, ...LABEL_ASSUMPTIONS],
  async load(ctx) {
    const { page } = parameters.parse(ctx.params);
    const apps = await readTaggedApplications(ctx);
    return pageOfList(aggregateLabels(apps.values()), { page, pageSize: LABELS_PAGE_SIZE, wrapperKey: 'labels', publicUrl: ctx.publicUrl });
  },
});
