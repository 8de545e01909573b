import { z } from 'zod';
import { V2Error, writeRefused, UpstreamError, defineParams, param, defineWriteMapping, parseAnswer, isBodyObject, type BodyObject, type BodyValue, XML_ASSUMPTION } from '../../src/mapping-api.ts';
import { EntityTitles } from '../common/entity-titles.ts';
import { applicationGuid } from '../common/application-ref.ts';
import { APPLICATION_ASSUMPTIONS, endUserApdexGap, browserLoaderOf, readApplication, readApplicationEntity, shownApplication } from './application.ts';
import { APPLICATION_TITLES } from '../../facts/v2-titles.ts';

/**
 * PUT /v2/applications/{id}.{json,xml}: name (the display alias), apdex thresholds and real
 * user monitoring, as one agentApplicationSettingsUpdate (docs/write-rules.md §2).
 */
const VALIDATION_TITLE = APPLICATION_TITLES.updateInvalid;

interface Changes {
  alias?: string;
  apdexTarget?: number;
  endUserApdexTarget?: number;
  browserMonitoring?: boolean;
}

/** Absent and null both mean "not given". */
function given(object: BodyObject, key: string): boolean {
  return Object.hasOwn(object, key) && object[key] !== undefined && object[key] !== null;
}

function threshold(value: BodyValue | undefined, field: string, problems: string[]): number | undefined {
  // Decimal text only: Number() would also read '0x1' or 'Infinity'.
  const decimal = typeof value === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(value);
  const number = typeof value === 'number' ? value : decimal ? Number(value) : Number.NaN;
  if (!Number.isFinite(number) || number <= 0) problems.push(`${field} must be a number greater than 0`);
  else if (number > 100) problems.push(`${field} must be a number less than or equal to 100`);
  else return number;
  return undefined;
}

function flag(value: BodyValue | undefined, field: string, problems: string[]): boolean | undefined {
  const text = typeof value === 'boolean' ? String(value) : typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (text === 'true') return true;
  if (text === 'false') return false;
  problems.push(`${field} must be true or false`);
  return undefined;
}

/** v2's rules; every problem is listed in the 422's messages. */
function parseChanges(body: BodyObject): Changes {
  const application = Object.hasOwn(body, 'application') ? body.application : undefined;
  if (!isBodyObject(application)) throw new V2Error(422, VALIDATION_TITLE, { messages: ['application must be an object'], kind: 'invalid_update' });
  const problems: string[] = [];
  const changes: Changes = {};
  if (given(application, 'name')) {
    const name = application.name;
    if (typeof name !== 'string') problems.push('name must be a string');
    else if (name.trim() === '') problems.push("name can't be blank");
    else if ([...name.trim()].length > 255) problems.push('name is too long (maximum is 255 characters)');
    else changes.alias = name.trim();
  }
  if (given(application, 'settings') && !isBodyObject(application.settings)) problems.push('settings must be an object');
  const settings = isBodyObject(application.settings) ? application.settings : (Object.create(null) as BodyObject);
  if (given(settings, 'app_apdex_threshold')) changes.apdexTarget = threshold(settings.app_apdex_threshold, 'settings.app_apdex_threshold', problems);
  if (given(settings, 'end_user_apdex_threshold')) changes.endUserApdexTarget = threshold(settings.end_user_apdex_threshold, 'settings.end_user_apdex_threshold', problems);
  if (given(settings, 'enable_real_user_monitoring')) changes.browserMonitoring = flag(settings.enable_real_user_monitoring, 'settings.enable_real_user_monitoring', problems);
  if (problems.length > 0) throw new V2Error(422, VALIDATION_TITLE, { messages: problems, kind: 'invalid_update' });
  return changes;
}

/**
 * The loader NONE -> true picks: SPA, NerdGraph's own default for a browser app it creates or
 * attaches to an APM app (agentApplicationCreateBrowser, agentApplicationEnableApmBrowser:
 * nerdgraph.md §7), and New Relic's recommended "Pro + SPA" agent. v2 had one boolean, so any
 * loader is "on" to a v2 client.
 */
export const LOADER_WHEN_TURNED_ON = 'SPA';

/**
 * The loader change enable_real_user_monitoring asks for, given the configured loader
 * (browserLoaderOf: null when a browser side serves the app but its loader is unknown, which
 * counts as on). Only a real change: `true` keeps PRO, LITE or SPA (the Go client sends the flag
 * with every update, no omitempty, so an unchanged GET-then-PUT must change nothing), `false`
 * on an app already NONE sends nothing; NONE -> true picks LOADER_WHEN_TURNED_ON.
 */
export function loaderChange(wanted: boolean, current: string | null): string | undefined {
  const on = current === null || current !== 'NONE';
  if (wanted === on) return undefined;
  return wanted ? LOADER_WHEN_TURNED_ON : 'NONE';
}

function settingsInput(changes: Changes, loader: string | undefined): Record<string, unknown> | null {
  const input: Record<string, unknown> = {};
  if (changes.alias !== undefined) input.alias = changes.alias;
  if (changes.apdexTarget !== undefined) input.apmConfig = { apdexTarget: changes.apdexTarget };
  if (changes.endUserApdexTarget !== undefined) input.browserConfig = { apdexTarget: changes.endUserApdexTarget };
  if (loader !== undefined) input.browserMonitoring = { loader };
  return Object.keys(input).length > 0 ? input : null;
}

const UpdateResult = z.object({
  agentApplicationSettingsUpdate: z
    .object({
      errors: z.array(z.object({ description: z.string().nullable().optional(), errorClass: z.string().nullable().optional(), field: z.string().nullable().optional() })).nullable().optional(),
    })
    .nullable(),
});

/** Payload errors are refusals: nothing was changed. */
function refusal(errors: ReadonlyArray<{ description?: string | null; errorClass?: string | null; field?: string | null }>): V2Error {
  const messages = errors.map((e) => [e.field, e.description].filter(Boolean).join(': ')).filter(Boolean);
  const classes = errors.map((e) => e.errorClass);
  if (classes.includes('NOT_FOUND')) return writeRefused(404, EntityTitles.applicationNotFound);
  if (classes.includes('ACCESS_DENIED')) return writeRefused(403, 'The API key is not allowed to change this application');
  return writeRefused(422, VALIDATION_TITLE, messages);
}

export default defineWriteMapping({
  kind: 'write',
  id: 'applications.update',
  method: 'PUT',
  route: '/v2/applications/{id}.{format}',
  sample: { path: { id: '{reporting_app_id}' }, body: { json: { application: { settings: { app_apdex_threshold: 0.7 } } } } },
  operation: 'ApplicationSettingsUpdate',
  summary: 'Update an application: alias, apdex thresholds and browser monitoring in one agentApplicationSettingsUpdate, then the application read back',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: 'The change may have been applied, but New Relic did not confirm it: read the application before retrying',
  parameters: defineParams({
    name: param.bodyField('application.name', { fidelity: 'exact', note: 'The display alias (settings alias), 1 to 255 characters.' }),
    apdex: param.bodyField('application.settings.app_apdex_threshold', { fidelity: 'exact', note: 'apmConfig.apdexTarget; a number > 0 and <= 100.' }),
    endUserApdex: param.bodyField('application.settings.end_user_apdex_threshold', {
      fidelity: 'approximate',
      note: 'browserConfig.apdexTarget; only takes effect while browser monitoring is on.',
    }),
    realUserMonitoring: param.bodyField('application.settings.enable_real_user_monitoring', {
      fidelity: 'approximate',
      note: 'Compared with the configured loader (read first): true keeps PRO, LITE or SPA and turns NONE into SPA; false sends NONE; the same value as configured sends no loader change.',
    }),
    serverSideConfig: param.bodyField('application.settings.use_server_side_config', { fidelity: 'exact', note: 'Read-only in v2: ignored.' }),
  }),
  fields: [{ field: 'application', fidelity: 'approximate', source: 'ApplicationByGuid after the update, as GET /v2/applications/{id} shows it' }],
  knownGaps: [
    endUserApdexGap('application'),
    {
      description:
        'settings.end_user_apdex_threshold is ignored while browser monitoring is off (docs/write-rules.md §2): the answer then shows the default 7, not the value sent.',
    },
    { description: 'Turning real user monitoring on from NONE picks the SPA loader (NerdGraph\'s default for a new browser app); v2 chose the loader itself. An app already on keeps its loader (PRO, LITE or SPA).' },
    {
      description:
        'enable_real_user_monitoring is compared with the loader read just before the update (one more request when the flag is sent): a loader changed by someone else in between is not seen.',
    },
    { description: 'The answer is read back after the update; a read that lags NerdGraph\'s write can show the previous values.' },
    {
      description:
        "The answer's links list every page of applicationInstancesV2; past the gateway's bound (20 pages or 10,000 instances) they list the first page only, where GET /v2/applications/{id} answers 503 (the write is never refused nor reported failed for it).",
    },
  ],
  assumptions: [
    XML_ASSUMPTION,
    ...APPLICATION_ASSUMPTIONS,
    'Validation failures list every field problem under error.messages.',
    "The configured loader is the browser app's browserSettings.browserMonitoring.loader (the browser app with the APM app's id, UNCONFIRMED; probes: browser-app-carries-apm-app-id, browser-side-only-while-loader-on); no browser app is NONE.",
  ],
  async plan(ctx) {
    const { guid } = applicationGuid(ctx, ctx.pathParams.id);
    const changes = parseChanges(ctx.body);
    // The flag is compared with the configured loader, so it needs the app read first (which
    // also answers a request that changes nothing, and proves the app exists: v2's 404). The
    // entity and its browser side only: no later pages of instances, so an app past their bound
    // is still written.
    const before = changes.browserMonitoring === undefined ? undefined : await readApplicationEntity(ctx, guid);
    const loader =
      changes.browserMonitoring === undefined || before === undefined
        ? undefined
        : loaderChange(changes.browserMonitoring, browserLoaderOf(before.entity.applicationId, before.browser));
    const settings = settingsInput(changes, loader);
    // Nothing to change still proves the app exists before answering (v2 answered 404 or the app).
    if (settings === null) {
      const body = before === undefined ? (await readApplication(ctx, guid, 'first-page')).body : await shownApplication(ctx, before, 'first-page');
      return { variables: null, answer: () => body };
    }
    return {
      variables: { guid, settings },
      answer: async (payload) => {
        const result = parseAnswer(UpdateResult, payload, 'ApplicationSettingsUpdate').agentApplicationSettingsUpdate;
        // No result and no errors: nothing says whether the change happened.
        if (result === null) throw new UpstreamError('upstream_failure', 'ApplicationSettingsUpdate: empty result');
        if (result.errors && result.errors.length > 0) throw refusal(result.errors);
        // The write happened: past the instance bound the links list the first page, never an error.
        return (await readApplication(ctx, guid, 'first-page')).body;
      },
    };
  },
});
