/**
 * Retired products on the legacy face (plugins, components, servers, usages, legacy
 * alert_policies and notification_channels, dashboards, plugin conditions) and the password
 * reset NerdGraph cannot do: the answer the live legacy REST API gives today (410 Gone where
 * that is known, routes-next.md §8), or the status chosen where it is UNCONFIRMED.
 *
 * The live API's own titles are UNCONFIRMED, so the face answers with the gateway's table
 * (src/v2/retired.ts, shared with the gateway's mappings): a differential then checks routing, method, status, format
 * and auth order for these routes, not the wording.
 */
import { V2Error } from '../../src/v2/errors.ts';
import { RETIRED, RETIRED_ROUTES } from '../../src/v2/retired.ts';
import type { LegacyRoute } from './common.ts';

/**
 * In the order the gateway loads their mappings (file name `retired.<id>.ts`), so a 405's
 * Allow header lists a template's methods in the same order on both faces.
 */
const BY_ID = [...RETIRED_ROUTES].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

export const RETIRED_LEGACY_ROUTES: readonly LegacyRoute[] = BY_ID.map(({ family, method, route }) => ({
  template: route,
  methods: [method],
  // Nothing is read: the request body, whatever it is, changes nothing.
  body: 'own' as const,
  handler: (): never => {
    const { status, title } = RETIRED[family];
    throw new V2Error(status, title);
  },
}));
