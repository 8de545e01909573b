/**
 * Retired products on the legacy face (plugins, components, servers, usages, legacy
 * alert_policies and notification_channels, dashboards, plugin conditions) and the password
 * reset: the routes are the shared fact (facts/v2-routes.ts); the answers are the sandbox's own,
 * from routes-next.md §8:
 * - plugins and components: 410, as New Relic's Go client's integration tests record ("API
 *   reaching EOL (returns 410 HTTP status)"); the live title is UNCONFIRMED;
 * - dashboards: 410 with the text users report from the live API;
 * - servers, usages, legacy alert policies and notification channels, plugin conditions: the
 *   live answer is UNCONFIRMED; the sandbox answers 410, the status of a retired product;
 * - password reset: the sandbox cannot send mail, so it refuses (422) and changes nothing.
 * The differential compares status, format and the order of checks here, not the wording.
 */
import { RETIRED_ROUTES, type RetiredFamilyName } from '../../facts/v2-routes.ts';
import type { LegacyRoute } from './common.ts';
import { V2Error, type V2Status } from './wire.ts';

const ANSWERS: Record<RetiredFamilyName, [V2Status, string]> = {
  plugins: [410, 'Plugins have reached end of life (June 16, 2021)'],
  components: [410, 'Plugin components have reached end of life (June 16, 2021)'],
  servers: [410, 'Servers have reached end of life (May 15, 2018)'],
  usages: [410, 'Usage reporting over REST v2 has reached end of life'],
  alertPolicies: [410, 'Legacy alert policies have reached end of life'],
  notificationChannels: [410, 'Legacy notification channels have reached end of life'],
  dashboards: [410, 'This endpoint is deprecated: Please see documentation on migrating to NerdGraph, our GraphQL API'],
  pluginsConditions: [410, 'Plugin alert conditions have reached end of life with Plugins (June 16, 2021)'],
  resetPassword: [422, 'Passwords cannot be reset here'],
};

/** Ordered by route id, so a 405's Allow lists a template's methods in one stable order. */
const BY_ID = [...RETIRED_ROUTES].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

export const RETIRED_LEGACY_ROUTES: readonly LegacyRoute[] = BY_ID.map(({ family, method, route }) => ({
  template: route,
  methods: [method],
  // Nothing is read: the request body, whatever it is, changes nothing.
  body: 'own' as const,
  handler: (): never => {
    const [status, title] = ANSWERS[family];
    throw new V2Error(status, title);
  },
}));
