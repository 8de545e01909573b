/**
 * The legacy face's writes, by docs/write-rules.md: application settings and delete (rules §2,
 * §3) and mobile and browser application create (rules §6); deployments (list, create, delete,
 * and the v0 `POST /deployments.xml`, rules §4, §5) are deployments.ts, request bodies (§1)
 * bodies.ts. Like metrics.ts this is part of the reference the gateway is compared against, so
 * it reads request bodies and applies the rules on its own; the change itself goes through
 * ../writes.ts, so both sandbox faces see it.
 *
 * routes.ts routes here with the account resolved and, for application routes, the
 * application already found in that account.
 */
import { V2Error, CONTENT_TYPES, serialise, type V2Body, type V2Format, type JsonValue } from './wire.ts';
import type { SandboxApp, SandboxData } from '../model.ts';
import { createBrowserApplication, createMobileApplication, removeApplication, updateApplication, type ApplicationChanges } from '../writes.ts';
import { bodyParams, characters, field, given, isObject, type Params } from './bodies.ts';
import { APPLICATION_TITLES, DEPLOYMENT_TITLES } from '../../facts/v2-titles.ts';
import { CREATED_APP_RULE_TITLES, DEPLOYMENT_RULE_TITLES } from '../../facts/rule-titles.ts';

export interface WriteRequest {
  data: SandboxData;
  /** The caller's account, from the key (and X-Account-Id). */
  accountId: number;
  format: V2Format;
  /** The request clock, epoch ms. */
  now: number;
  /** The raw request, whose body is read here (bounded). */
  request: Request;
  /** The query string (the v0 route takes its fields from there too). */
  query: URLSearchParams;
  /** What GET /v2/applications/{id} answers for the app: `{application, links}`. */
  shown(app: SandboxApp): V2Body;
}

export interface DeploymentsRequest extends WriteRequest {
  app: SandboxApp;
  /** The requested page, already validated as for the applications list. */
  page: number;
  /** v2's Link header for this request at `page` of `lastPage`. */
  link(page: number, lastPage: number): string | undefined;
}

export const WriteTitles = {
  updateInvalid: APPLICATION_TITLES.updateInvalid,
  stillReporting: APPLICATION_TITLES.stillReporting,
  missingDeployment: DEPLOYMENT_TITLES.missingWrapper,
  revisionRequired: DEPLOYMENT_TITLES.revisionRequired,
  tooLong: DEPLOYMENT_RULE_TITLES.tooLong,
  notText: DEPLOYMENT_RULE_TITLES.notText,
  fourByte: DEPLOYMENT_RULE_TITLES.fourByte,
  badTimestamp: DEPLOYMENT_RULE_TITLES.badTimestamp,
  futureTimestamp: DEPLOYMENT_RULE_TITLES.future,
  staleTimestamp: DEPLOYMENT_RULE_TITLES.notLatest,
  deploymentNotFound: 'No Deployment found with the given ID',
  appFieldRequired: DEPLOYMENT_RULE_TITLES.appFieldRequired,
  appNameNotFound: DEPLOYMENT_RULE_TITLES.appNameNotFound,
  nameBlank: CREATED_APP_RULE_TITLES.nameBlank,
  nameTooLong: CREATED_APP_RULE_TITLES.nameTooLong,
} as const;

export function reply(format: V2Format, status: number, body: V2Body): Response {
  return new Response(serialise(body, format), { status, headers: { 'content-type': CONTENT_TYPES[format] } });
}

export const invalid = (title: string): V2Error => new V2Error(422, title);

// ---------------------------------------------------------------------------------------------
// PUT /v2/applications/{id} (rules §2)

/** A finite number, or a numeric string read as one. */
function numberOf(value: JsonValue | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(text)) return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}

function booleanOf(value: JsonValue | undefined): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : undefined;
}


function apdexRule(settings: Params, key: string, messages: string[]): number | undefined {
  const raw = field(settings, key);
  if (!given(raw)) return undefined;
  const number = numberOf(raw);
  if (number === undefined || number <= 0) messages.push(`settings.${key} must be a number greater than 0`);
  else if (number > 100) messages.push(`settings.${key} must be a number less than or equal to 100`);
  else return number;
  return undefined;
}

export async function legacyUpdateApplication(req: WriteRequest, app: SandboxApp): Promise<Response> {
  const params = await bodyParams(req.request);
  const application = field(params, 'application');
  const messages: string[] = [];
  const changes: ApplicationChanges = {};
  if (!isObject(application)) {
    messages.push('application must be an object');
  } else {
    const name = field(application, 'name');
    if (given(name)) {
      if (typeof name !== 'string') messages.push('name must be a string');
      else if (name.trim() === '') messages.push("name can't be blank");
      else if (characters(name.trim()) > 255) messages.push('name is too long (maximum is 255 characters)');
      else changes.name = name.trim();
    }
    const settings = field(application, 'settings');
    if (given(settings) && !isObject(settings)) messages.push('settings must be an object');
    if (isObject(settings)) {
      const apdex = apdexRule(settings, 'app_apdex_threshold', messages);
      if (apdex !== undefined) changes.apdexTarget = apdex;
      const endUser = apdexRule(settings, 'end_user_apdex_threshold', messages);
      if (endUser !== undefined) changes.endUserApdexTarget = endUser;
      const rum = field(settings, 'enable_real_user_monitoring');
      if (given(rum)) {
        const flag = booleanOf(rum);
        if (flag === undefined) messages.push('settings.enable_real_user_monitoring must be true or false');
        else changes.browserMonitoring = flag;
      }
      // use_server_side_config is read-only in v2: ignored.
    }
  }
  if (messages.length > 0) return reply(req.format, 422, { error: { title: WriteTitles.updateInvalid, messages } });
  if (Object.keys(changes).length > 0) updateApplication(req.data, app, changes);
  return reply(req.format, 200, req.shown(app));
}

// ---------------------------------------------------------------------------------------------
// DELETE /v2/applications/{id} (rules §3)

export function legacyDeleteApplication(req: WriteRequest, app: SandboxApp): Response {
  if (app.reporting) throw new V2Error(409, WriteTitles.stillReporting);
  const before = req.shown(app);
  removeApplication(req.data, app);
  return reply(req.format, 200, before);
}

// ---------------------------------------------------------------------------------------------
// Mobile and browser application create (rules §6)

function newAppName(wrapper: JsonValue | undefined): string {
  const name = field(wrapper, 'name');
  if (typeof name !== 'string' || name.trim() === '') throw invalid(WriteTitles.nameBlank);
  if (characters(name.trim()) > 255) throw invalid(WriteTitles.nameTooLong);
  return name.trim();
}

export async function legacyCreateApplication(req: WriteRequest, kind: 'mobile' | 'browser'): Promise<Response> {
  const params = await bodyParams(req.request);
  if (kind === 'mobile') {
    const wrapper = isObject(field(params, 'mobile_application')) ? field(params, 'mobile_application') : field(params, 'application');
    const created = createMobileApplication(req.data, req.accountId, newAppName(wrapper));
    return reply(req.format, 201, { application: { id: created.id, name: created.name, health_status: 'unknown', reporting: false } });
  }
  const created = createBrowserApplication(req.data, req.accountId, newAppName(field(params, 'browser_application')));
  return reply(req.format, 201, {
    browser_application: {
      id: created.id,
      name: created.name,
      browser_monitoring_key: created.browserMonitoringKey ?? null,
      loader_script: created.loaderScript ?? null,
    },
  });
}
