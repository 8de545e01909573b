import { z } from 'zod';
import { entityQuery, hasControlCharacters, V2Error, notFound, defineWriteMapping, type OperationContext, parseAnswer, type V2Body, type V2Format, decodeEntityGuid, defineParams, param, objectAt, type BodyObject, type JsonValue, toXml, type XmlLayout } from '../../src/mapping-api.ts';
import { DeploymentTitles, NO_REVISION_VERSION, planDeploymentCreate } from './deployment.ts';
import { applicationGuid } from '../common/application-ref.ts';
import { DEPLOYMENT_RULE_TITLES } from '../../facts/rule-titles.ts';

/**
 * POST /deployments.xml: the Deployments v0 API (retired with REST v2), still sent by older
 * Capistrano recipes and shell scripts: form fields deployment[application_id] or
 * deployment[app_name], plus the v2 deployment fields, answered in v0's Rails XML.
 */
const AS_V2 = { fidelity: 'approximate', note: 'As POST /v2/applications/{id}/deployments.' } as const;

/** deployment[...] as sent; the v2 deployment rules validate them with any JSON/XML body fields. */
const parameters = defineParams({
  application_id: param.single('deployment[application_id]', { fidelity: 'exact', note: 'The app id; wins over app_name.' }),
  app_name: param.single('deployment[app_name]', { fidelity: 'exact', note: 'Exact, case-sensitive app name in the account (an entity search, then an exact check).' }),
  revision: param.single('deployment[revision]', { fidelity: 'approximate', note: `Optional, as v0's documented example sends none: absent or blank, change tracking gets the version "${NO_REVISION_VERSION}" and the answer and the v2 listing have no revision (null). Otherwise as POST /v2/applications/{id}/deployments.` }),
  changelog: param.single('deployment[changelog]', AS_V2),
  description: param.single('deployment[description]', AS_V2),
  user: param.single('deployment[user]', AS_V2),
  timestamp: param.single('deployment[timestamp]', AS_V2),
});

/** deployment[...] from the query string or form, overlaid by a JSON/XML body's deployment object. */
function v0Fields(ctx: OperationContext): BodyObject {
  const wrapper = objectAt(ctx.body, 'deployment');
  // No deployment[...] anywhere: the same 400 as v2's deployment create (write-rules §4).
  if (wrapper === undefined && ![...ctx.params.keys()].some((key) => key.startsWith('deployment['))) {
    throw new V2Error(400, DeploymentTitles.missingWrapper, { kind: 'invalid_deployment' });
  }
  const fields: BodyObject = Object.create(null) as BodyObject;
  for (const [field, value] of Object.entries(parameters.parse(ctx.params))) {
    if (value !== undefined) fields[field] = value;
  }
  return Object.assign(fields, wrapper ?? {});
}

const ByName = z.object({
  actor: z.object({
    entitySearch: z.object({
      results: z.object({ entities: z.array(z.object({ guid: z.string(), accountId: z.number(), name: z.string() }).nullable()).nullable() }).nullable(),
    }),
  }),
});

/** The app id for an exact (case-sensitive) name in the account; entity search LIKE-matches names. */
async function appIdByName(ctx: OperationContext, name: string): Promise<string> {
  // No app name holds control characters, and no query literal can carry them.
  if (hasControlCharacters(name)) throw notFound(DEPLOYMENT_RULE_TITLES.appNameNotFound);
  const query = entityQuery([
    { field: 'domain', op: '=', value: 'APM' },
    { field: 'type', op: '=', value: 'APPLICATION' },
    { field: 'accountId', op: '=', value: ctx.accountId },
    { field: 'name', op: '=', value: name },
  ]);
  const answer = parseAnswer(ByName, await ctx.read('EntityGuidSearch', { query }), 'EntityGuidSearch');
  const match = (answer.actor.entitySearch.results?.entities ?? []).find((e) => e !== null && e.name === name && e.accountId === ctx.accountId);
  const domainId = match ? decodeEntityGuid(match.guid)?.domainId : undefined;
  if (domainId === undefined) throw notFound(DEPLOYMENT_RULE_TITLES.appNameNotFound);
  return domainId;
}

/**
 * v0's answer: the deployment record in Rails' own `to_xml` (dashed names, typed scalars, one
 * element a line), written by the one XML writer, so its text is escaped as every XML answer's.
 */
const V0_LAYOUT: XmlLayout = { root: 'deployment', indent: '  ', textTypes: { timestamp: 'datetime' } };

function v0Xml(body: V2Body): string {
  const deployment = (body.deployment ?? {}) as Record<string, JsonValue>;
  const field = (key: string): JsonValue => (Object.hasOwn(deployment, key) ? (deployment[key] as JsonValue) : null);
  return toXml(
    {
      'account-id': field('account_id'),
      'agent-id': field('agent_id'),
      changelog: field('changelog'),
      description: field('description'),
      id: field('id'),
      revision: field('revision'),
      timestamp: field('timestamp'),
      user: field('user'),
    },
    V0_LAYOUT,
  );
}

export default defineWriteMapping({
  kind: 'write',
  id: 'deployments.v0',
  method: 'POST',
  route: '/deployments.{format}',
  sample: { format: 'xml', body: { form: 'deployment[application_id]={reporting_app_id}&deployment[revision]=costs-v0-{call}' } },
  operation: 'DeploymentCreate',
  summary: 'Deployments v0: app by id or exact name, the v2 deployment rules, one changeTrackingCreateEvent, v0 XML answer',
  fidelity: 'approximate',
  successStatus: 201,
  unconfirmedTitle: DeploymentTitles.unconfirmed,
  parameters,
  fields: [
    { field: 'deployment.id', fidelity: 'approximate', source: 'deploymentV2Id(changeTrackingId)' },
    { field: 'deployment.agent-id', fidelity: 'approximate', source: 'the application id' },
    { field: 'deployment.account-id', fidelity: 'exact', source: 'the resolved account' },
  ],
  knownGaps: [
    { description: 'v0\'s XML answer is not documented anywhere the project could read; the Rails form is an assumption.' },
    { description: 'deployment[host] and other v0 extras are ignored.' },
    { description: 'As for v2 deployments: 24-hour timestamp limit, unconfirmed outcomes answered as such, derived ids.' },
    {
      description: `A deployment without deployment[revision] (New Relic's own v0 example, setting-deployment-notifications#api and deployment-notifications#examples, pages that now redirect to record-monitor-deployments.mdx, sends only app_name and description) is recorded with the change-tracking version "${NO_REVISION_VERSION}", since ChangeTrackingDeploymentFieldsInput.version is non-null: the v0 answer has no revision (nil, as sent) and GET /v2/applications/{id}/deployments reads that version back as revision null, as v0 recorded it; a v2 deployment whose revision is that very text is listed with revision null too, and New Relic's own UI and NerdGraph show the text. UNCONFIRMED that NerdGraph accepts that version as any other (no probe: the probe never writes).`,
    },
  ],
  assumptions: [
    'v0 recorded a deployment without deployment[revision] (its documented example sends none; UNCONFIRMED; no probe: only a write shows it, and the probe is read-only).',
    'Success is 201 with Rails XML (dashed names, type attributes); errors are v2 XML error bodies.',
    'A JSON request (/deployments.json) gets the same fields as JSON.',
  ],
  serialise(body: V2Body, format: V2Format) {
    return format === 'xml' ? v0Xml(body) : JSON.stringify(body);
  },
  async plan(ctx) {
    const fields = v0Fields(ctx);
    const rawId = fields.application_id;
    const rawName = fields.app_name;
    let appIdText: string;
    if (rawId !== undefined && rawId !== null && String(rawId).trim() !== '') appIdText = String(rawId).trim();
    else if (typeof rawName === 'string' && rawName.trim() !== '') appIdText = await appIdByName(ctx, rawName);
    else throw new V2Error(422, DEPLOYMENT_RULE_TITLES.appFieldRequired, { kind: 'invalid_deployment' });
    const app = applicationGuid(ctx, appIdText);
    return planDeploymentCreate(
      ctx,
      app,
      fields,
      ({ links: _links, ...created }) => ({ deployment: { ...created, account_id: ctx.accountId, agent_id: app.id } }),
      { revisionOptional: true },
    );
  },
});
