import { APPLICATION_HOST_TITLES, APPLICATION_TITLES, MOBILE_APPLICATION_TITLES } from '../../facts/v2-titles.ts';

/**
 * v2's 404 titles for the entity kinds several routes address by id, declared here with the
 * routes that answer them, not in src/. The words are facts (facts/v2-titles.ts), which the
 * sandbox's legacy face reads too.
 */
export const EntityTitles = {
  applicationNotFound: APPLICATION_TITLES.notFound,
  applicationHostNotFound: APPLICATION_HOST_TITLES.hostNotFound,
  applicationInstanceNotFound: APPLICATION_HOST_TITLES.instanceNotFound,
  mobileApplicationNotFound: MOBILE_APPLICATION_TITLES.notFound,
} as const;
