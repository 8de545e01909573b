/**
 * The legacy face's deployments, by docs/write-rules.md: the list (change tracking's 13-month
 * retention, 200 per page), create and delete (rules §4), and the v0 `POST /deployments.xml`
 * (rules §5, answering Rails' `to_xml` of the record). The change goes through ../writes.ts, so
 * both sandbox faces see it.
 */
import { V2Error, notFound, CONTENT_TYPES, serialise, type V2Body, isoSeconds, escapeXmlText, type JsonValue } from './wire.ts';
import { V2Titles } from './titles.ts';
import { parseTime } from './metric-params.ts';
import type { SandboxApp, SandboxData, SandboxDeployment } from '../model.ts';
import { deploymentsOf, recordDeployment, removeDeployment, type DeploymentFields } from '../writes.ts';
import { OUTSIDE_BMP, bodyParams, characters, field, given, isObject, queryParams, textOf, type Params } from './bodies.ts';
import { WriteTitles, invalid, reply, type DeploymentsRequest, type WriteRequest } from './writes.ts';
import { DEPLOYMENT_LINKS } from '../../facts/v2-values.ts';

const PAGE_SIZE = 200;
/**
 * The shared model keeps a revision as text; '' is "none given", which only the v0 form can
 * record (a v2 create refuses a blank one), and reads as nil, as Rails kept it.
 */
const NO_REVISION = '';
const revisionOf = (deployment: SandboxDeployment): string | null => (deployment.revision === NO_REVISION ? null : deployment.revision);
// ---------------------------------------------------------------------------------------------
// Deployments (rules §4)

function deploymentBody(deployment: SandboxDeployment): V2Body {
  return {
    id: deployment.id,
    revision: revisionOf(deployment),
    changelog: deployment.changelog,
    description: deployment.description,
    user: deployment.user,
    timestamp: isoSeconds(deployment.timestamp),
    links: { application: deployment.appId },
  };
}

/** Change tracking's retention: 13 calendar months back from now. */
function retentionStart(now: number): number {
  const date = new Date(now);
  date.setUTCMonth(date.getUTCMonth() - 13);
  return date.getTime();
}

export function legacyDeployments(req: DeploymentsRequest): Response {
  const since = retentionStart(req.now);
  const visible = deploymentsOf(req.data, req.app).filter((deployment) => deployment.timestamp >= since && deployment.timestamp <= req.now);
  const page = visible.slice((req.page - 1) * PAGE_SIZE, req.page * PAGE_SIZE).map(deploymentBody);
  const link = req.link(req.page, Math.ceil(visible.length / PAGE_SIZE));
  const body: V2Body = { deployments: page, links: { ...DEPLOYMENT_LINKS } };
  return new Response(serialise(body, req.format), {
    status: 200,
    headers: { 'content-type': CONTENT_TYPES[req.format], ...(link ? { link } : {}) },
  });
}


/** An optional text field: null when absent or null, its text when a string or number. */
function optionalText(deployment: Params, key: string): string | null {
  const value = field(deployment, key);
  if (!given(value)) return null;
  const text = textOf(value);
  if (text === undefined) throw invalid(WriteTitles.notText(key));
  return text;
}

/**
 * The §4 rules, in their order; the fields to record. `revisionOptional` is the v0 form's
 * (§5): an absent, null or blank revision is none.
 */
function deploymentFields(deployment: Params, app: SandboxApp, data: SandboxData, now: number, revisionOptional = false): DeploymentFields {
  const raw = field(deployment, 'revision');
  const sent = textOf(raw);
  const blank = sent === undefined || sent.trim() === '';
  // v0 without a revision: none at all, null, or blank text (a boolean or object is still refused).
  const none = revisionOptional && (!given(raw) || (sent !== undefined && blank));
  if (blank && !none) throw new V2Error(400, WriteTitles.revisionRequired);
  const revision = none ? NO_REVISION : (sent as string);
  if (characters(revision) > 127) throw invalid(WriteTitles.tooLong('revision', 127));
  const changelog = optionalText(deployment, 'changelog');
  if (changelog !== null && characters(changelog) > 65_535) throw invalid(WriteTitles.tooLong('changelog', 65_535));
  const description = optionalText(deployment, 'description');
  if (description !== null && characters(description) > 65_535) throw invalid(WriteTitles.tooLong('description', 65_535));
  const user = optionalText(deployment, 'user');
  if (user !== null && characters(user) > 31) throw invalid(WriteTitles.tooLong('user', 31));
  const texts: Array<[string, string | null]> = [
    ['revision', revision],
    ['changelog', changelog],
    ['description', description],
    ['user', user],
  ];
  const offending = texts.find(([, text]) => text !== null && OUTSIDE_BMP.test(text));
  if (offending) throw invalid(WriteTitles.fourByte(offending[0]));
  const timestamp = explicitTimestamp(field(deployment, 'timestamp'), app, data, now) ?? Math.floor(now / 1000) * 1000;
  return { revision, changelog, description, user, timestamp };
}

/** An explicit timestamp (epoch ms) checked against the clock and the app's deployments. */
function explicitTimestamp(value: JsonValue | undefined, app: SandboxApp, data: SandboxData, now: number): number | undefined {
  if (!given(value) || value === '') return undefined;
  const seconds = typeof value === 'string' ? parseTime(value) : undefined;
  if (seconds === undefined) throw invalid(WriteTitles.badTimestamp);
  const timestamp = seconds * 1000;
  if (timestamp > now) throw invalid(WriteTitles.futureTimestamp);
  const newest = deploymentsOf(data, app)[0];
  if (newest !== undefined && timestamp <= newest.timestamp) throw invalid(WriteTitles.staleTimestamp);
  return timestamp;
}

export async function legacyCreateDeployment(req: WriteRequest, app: SandboxApp): Promise<Response> {
  const deployment = field(await bodyParams(req.request), 'deployment');
  if (!isObject(deployment)) throw new V2Error(400, WriteTitles.missingDeployment);
  const created = recordDeployment(req.data, app, deploymentFields(deployment, app, req.data, req.now), 'Deployment');
  return reply(req.format, 201, { deployment: deploymentBody(created) });
}

export function legacyDeleteDeployment(req: WriteRequest, app: SandboxApp, deploymentId: string): Response {
  const id = /^[1-9]\d{0,15}$/.test(deploymentId) ? Number(deploymentId) : undefined;
  const removed = id === undefined ? undefined : removeDeployment(req.data, app, id);
  if (!removed) throw notFound(WriteTitles.deploymentNotFound);
  return reply(req.format, 200, { deployment: deploymentBody(removed) });
}

// ---------------------------------------------------------------------------------------------
// Deployments v0: POST /deployments.xml (rules §5)
//
// New Relic's v0 pages (docs/apm/new-relic-apm/maintenance/setting-deployment-notifications #api
// and .../deployment-notifications #examples, which record-monitor-deployments.mdx now stands
// for) give the request as
//   curl -H "x-api-key:..." -d "deployment[app_name]=..." -d "deployment[description]=This is an app id deployment" https://api.newrelic.com/deployments.xml
// with no deployment[revision]: v0 recorded a deployment without one, so this form does.

/** The v0 answer: Rails' `to_xml` of the record, dashed names, typed scalars. */
function v0DeploymentXml(deployment: SandboxDeployment): string {
  const element = (name: string, value: string | number | null, type?: string): string => {
    if (value === null) return `  <${name} nil="true"/>`;
    const text = typeof value === 'number' ? String(value) : escapeXmlText(value);
    return `  <${name}${type ? ` type="${type}"` : ''}>${text}</${name}>`;
  };
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<deployment>',
    element('account-id', deployment.accountId, 'integer'),
    element('agent-id', deployment.appId, 'integer'),
    element('changelog', deployment.changelog),
    element('description', deployment.description),
    element('id', deployment.id, 'integer'),
    element('revision', revisionOf(deployment)),
    element('timestamp', isoSeconds(deployment.timestamp), 'datetime'),
    element('user', deployment.user),
    '</deployment>',
    '',
  ].join('\n');
}

export async function legacyDeploymentV0(req: WriteRequest): Promise<Response> {
  const fromQuery = field(queryParams(req.query), 'deployment');
  const fromBody = field(await bodyParams(req.request), 'deployment');
  if (!isObject(fromQuery) && !isObject(fromBody)) throw new V2Error(400, WriteTitles.missingDeployment);
  // Body fields win over query fields, as Rails merges them.
  const deployment: Params = { ...(isObject(fromQuery) ? fromQuery : {}), ...(isObject(fromBody) ? fromBody : {}) };
  const idText = textOf(field(deployment, 'application_id'))?.trim() ?? '';
  const name = textOf(field(deployment, 'app_name')) ?? '';
  let app: SandboxApp | undefined;
  if (idText !== '') {
    app = /^[1-9]\d{0,14}$/.test(idText) ? req.data.apps.find((a) => a.id === Number(idText) && a.accountId === req.accountId) : undefined;
    if (!app) throw notFound(V2Titles.applicationNotFound);
  } else if (name.trim() !== '') {
    app = req.data.apps.find((a) => a.name === name && a.accountId === req.accountId);
    if (!app) throw notFound(WriteTitles.appNameNotFound);
  } else {
    throw invalid(WriteTitles.appFieldRequired);
  }
  const created = recordDeployment(req.data, app, deploymentFields(deployment, app, req.data, req.now, true), 'Deployment');
  if (req.format === 'json') {
    // v0 was an XML API; a `.json` request gets the same fields as JSON (the gateway's choice too).
    const body = {
      deployment: {
        account_id: created.accountId,
        agent_id: created.appId,
        changelog: created.changelog,
        description: created.description,
        id: created.id,
        revision: revisionOf(created),
        timestamp: isoSeconds(created.timestamp),
        user: created.user,
      },
    };
    return new Response(JSON.stringify(body), { status: 201, headers: { 'content-type': CONTENT_TYPES.json } });
  }
  return new Response(v0DeploymentXml(created), { status: 201, headers: { 'content-type': CONTENT_TYPES.xml } });
}
