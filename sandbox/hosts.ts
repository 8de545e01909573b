import type { SandboxApp, SandboxHost } from './model.ts';

/**
 * The hosts (and so the instances) an app has now. v2 listed hosts and instances that reported
 * in the recent past (rest-v2.md §3.4), and NerdGraph's applicationInstances defaults to the
 * last 10 minutes: an app that is not reporting has none. Both sandbox faces use this, so they
 * agree on every host list, link list and filter.
 */
export function currentHosts(app: SandboxApp): SandboxHost[] {
  return app.reporting ? app.hosts : [];
}
