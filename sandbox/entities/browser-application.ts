/** Browser applications (`BROWSER` / `APPLICATION`): standalone or the browser side of an APM app. */
import type { SandboxBrowserApp } from '../model.ts';
import { browserLoaderOf, type BrowserLoader } from '../browser-loader.ts';
import { commonOutline, type EntityKind, type EntityOutlineSource, type EntitySearchFields, type EntityViewContext, searchFieldsOf } from './kind.ts';

export interface BrowserSummarySource {
  ajaxRequestThroughput: number;
  ajaxResponseTimeAverage: number;
  jsErrorRate: number;
  pageLoadThroughput: number;
  pageLoadTimeAverage: number;
}

export interface BrowserApplicationSource extends EntityOutlineSource {
  __typename: 'BrowserApplicationEntityOutline' | 'BrowserApplicationEntity';
  applicationId: number;
  servingApmApplicationId: number | null;
  settings: { apdexTarget: number };
  /** The sandbox's loader is always the Lite one (see browserProperties). */
  agentInstallType: 'LITE';
  browserSummary: BrowserSummarySource | null;
}

export interface BrowserApplicationEntitySource extends BrowserApplicationSource {
  __typename: 'BrowserApplicationEntity';
  browserProperties: { jsConfig: Record<string, string>; jsConfigScript: string; jsLoaderScript: string };
  browserSettings: { browserConfig: { apdexTarget: number }; browserMonitoring: { loader: BrowserLoader } };
}

function searchFields(app: SandboxBrowserApp): EntitySearchFields {
  return searchFieldsOf('BROWSER', 'APPLICATION', app);
}

function view(
  app: SandboxBrowserApp,
  account: EntityOutlineSource['account'],
  browserSummaryOf: (app: SandboxBrowserApp) => BrowserSummarySource | null,
  __typename: BrowserApplicationSource['__typename'],
): BrowserApplicationSource {
  return {
    ...commonOutline(searchFields(app), account, { __typename, entityType: 'BROWSER_APPLICATION_ENTITY' }, app.lastReportingChangeAt),
    __typename,
    applicationId: app.id,
    servingApmApplicationId: app.servingApmApplicationId,
    settings: { apdexTarget: app.apdexTarget },
    agentInstallType: 'LITE',
    browserSummary: browserSummaryOf(app),
  };
}

/**
 * An APM-attached app shows its APM app's browser numbers; standalone apps have no summary in
 * the model, so NerdGraph's field is null for them.
 */
function summaryFrom(context: EntityViewContext): (app: SandboxBrowserApp) => BrowserSummarySource | null {
  return (app: SandboxBrowserApp): BrowserSummarySource | null => {
    const apmApp = app.servingApmApplicationId === null ? undefined : context.visibleApp(app.servingApmApplicationId);
    if (!apmApp?.browser) return null;
    return {
      ajaxRequestThroughput: apmApp.browser.ajaxRequestThroughput,
      ajaxResponseTimeAverage: apmApp.browser.ajaxResponseTimeSeconds,
      jsErrorRate: apmApp.browser.jsErrorRate,
      pageLoadThroughput: apmApp.browser.pageLoadThroughput,
      pageLoadTimeAverage: apmApp.browser.pageLoadTimeSeconds,
    };
  };
}

/**
 * The agent configuration. The key path is UNCONFIRMED in the reference: the sandbox puts the
 * browser monitoring key under `licenseKey` and the id under `applicationID`, as the loader's
 * NREUM.info object names them.
 */
function jsConfig(app: SandboxBrowserApp): Record<string, string> {
  return { accountID: String(app.accountId), agentID: String(app.id), applicationID: String(app.id), licenseKey: app.browserMonitoringKey };
}

function loaderOfBrowserApp(app: SandboxBrowserApp, context: EntityViewContext): BrowserLoader {
  const apmApp = app.servingApmApplicationId === null ? undefined : context.visibleApp(app.servingApmApplicationId);
  return apmApp ? browserLoaderOf(apmApp) : 'LITE';
}

export const browserApplicationKind: EntityKind<SandboxBrowserApp> = {
  domain: 'BROWSER',
  type: 'APPLICATION',
  list: (data) => data.browserApps,
  searchFields,
  outline: (app, context) => view(app, context.account, summaryFrom(context), 'BrowserApplicationEntityOutline'),
  entity: (app, context): BrowserApplicationEntitySource => {
    const config = jsConfig(app);
    return {
      ...view(app, context.account, summaryFrom(context), 'BrowserApplicationEntity'),
      __typename: 'BrowserApplicationEntity',
      browserProperties: {
        jsConfig: config,
        // The sandbox's own rendering of jsConfig as a script; the reference does not show the real text.
        jsConfigScript: `window.NREUM||(NREUM={});NREUM.info=${JSON.stringify(config)}`,
        // Real NerdGraph serves the app's configured loader (SPA or Pro by default) here, while v2
        // returned the Lite one; the sandbox returns the model's Lite script so both faces agree.
        jsLoaderScript: app.loaderScript,
      },
      // The configured loader: an APM app's browser side shows its app's (browser-loader.ts,
      // traffic or not); a standalone app is the Lite one the sandbox serves.
      browserSettings: { browserConfig: { apdexTarget: app.apdexTarget }, browserMonitoring: { loader: loaderOfBrowserApp(app, context) } },
    };
  },
};
