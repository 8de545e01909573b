/**
 * The legacy face's labels (REST v2 `/v2/labels`, retired June 30, 2022): list, PUT (create
 * and apply) and DELETE, from the same user tags the NerdGraph face serves (tagging.ts). The
 * rules and the label object are src/v2/labels.ts, shared with the gateway.
 *
 * - List: every label of the account's APM apps, by category then name, 20 per page.
 * - PUT: applies the label to each application in `links.applications` (unknown ids: 422
 *   before anything is written). A PUT without applications answers the label with empty links
 *   as v2 did, but the sandbox keeps labels only as tags on applications, so it stores nothing.
 * - DELETE: the listed applications lose the label, or every application when none are listed;
 *   a key no application carries, or a system tag's key (language:java), is a 404. v2 had no
 *   limit on how many applications one DELETE touched; the gateway has one (a documented gap).
 */
import type { SandboxApp } from '../model.ts';
import { addUserTag, removeUserTagValue, userTagsOf } from '../tagging.ts';
import {
  LABELS_PAGE_SIZE,
  LabelTitles,
  aggregateLabels,
  carries,
  healthBucket,
  isLabelTagKey,
  parseLabelCreate,
  parseLabelDelete,
  parseLabelKey,
  v2Label,
  type LabelBodyKind,
  type LabelKey,
  type LabelledApplication,
} from '../../src/v2/labels.ts';
import { V2Error, notFound } from './wire.ts';
import { pageOf, send, type LegacyRequest, type LegacyRoute } from './common.ts';
import { bodyParams } from './writes.ts';

function labelledApps(req: LegacyRequest): Array<LabelledApplication & { app: SandboxApp }> {
  return req.data.apps
    .filter((app) => app.accountId === req.accountId)
    .map((app) => ({
      app,
      id: app.id,
      health: healthBucket(app.reporting, app.alertSeverity),
      tags: Object.entries(userTagsOf(app)).map(([key, values]) => ({ key, values })),
    }));
}

function listLabels(req: LegacyRequest): Response {
  const page = pageOf(req.params);
  const labels = aggregateLabels(labelledApps(req));
  const link = req.link(page, Math.ceil(labels.length / LABELS_PAGE_SIZE));
  return send(req.format, 200, { labels: labels.slice((page - 1) * LABELS_PAGE_SIZE, page * LABELS_PAGE_SIZE) }, link ? { link } : {});
}

/** The named applications of the caller's account; 422 for the first id that is not one. */
function namedApps(req: LegacyRequest, ids: readonly number[]): Array<LabelledApplication & { app: SandboxApp }> {
  const apps = labelledApps(req);
  return ids.map((id) => {
    const found = apps.find((app) => app.id === id);
    if (!found) throw new V2Error(422, LabelTitles.unknownApplication(id));
    return found;
  });
}

const labelNow = (req: LegacyRequest, label: LabelKey): ReturnType<typeof v2Label> =>
  v2Label(
    label,
    labelledApps(req).filter((app) => carries(app, label)),
  );

/** How the body arrived, as bodyParams reads it: the Rails XML list rule is for XML only. */
function bodyKindOf(req: LegacyRequest): LabelBodyKind {
  const media = (req.request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (media === 'application/xml' || media === 'text/xml' || media.endsWith('+xml')) return 'xml';
  return media === 'application/x-www-form-urlencoded' ? 'form' : 'json';
}

async function createLabel(req: LegacyRequest): Promise<Response> {
  const input = parseLabelCreate(await bodyParams(req.request), bodyKindOf(req));
  const apps = namedApps(req, input.applications);
  for (const { app } of apps) addUserTag(req.data, app, input.category, [input.name]);
  return send(req.format, 200, { label: labelNow(req, input) });
}

async function deleteLabel(req: LegacyRequest): Promise<Response> {
  const label = parseLabelKey(req.path.key);
  // System tags (language, account, nr.*) are never labels: the list never shows them.
  if (!label || !isLabelTagKey(label.category)) throw notFound(LabelTitles.notFound);
  const { applications } = parseLabelDelete(await bodyParams(req.request), bodyKindOf(req));
  const carrying = labelledApps(req).filter((app) => carries(app, label));
  if (carrying.length === 0) throw notFound(LabelTitles.notFound);
  // Named applications that do not carry it are no error (nothing to remove).
  const targets = applications === undefined ? carrying : namedApps(req, applications);
  for (const { app } of targets) removeUserTagValue(req.data, app, label.category, label.name);
  return send(req.format, 200, { label: labelNow(req, label) });
}

export const LABEL_ROUTES: readonly LegacyRoute[] = [
  { template: '/v2/labels.{format}', methods: ['GET'], handler: listLabels },
  { template: '/v2/labels.{format}', methods: ['PUT'], body: 'own', handler: createLabel },
  { template: '/v2/labels/{key}.{format}', methods: ['DELETE'], body: 'own', handler: deleteLabel },
];
