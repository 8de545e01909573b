/**
 * v2's 404 titles for the entity kinds several routes address by id (rest-v2.md; routes-next.md
 * §0 for hosts and instances), declared here with the routes that answer them, not in src/.
 */
export const EntityTitles = {
  applicationNotFound: 'No Application found with the given ID',
  applicationHostNotFound: 'No application host found with the given ID',
  applicationInstanceNotFound: 'No application instance found with the given ID',
  mobileApplicationNotFound: 'No Mobile Application found with the given ID',
} as const;
