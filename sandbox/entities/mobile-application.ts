/** Mobile applications (`MOBILE` / `APPLICATION`). */
import type { SandboxMobileApp, SandboxMobileSummary } from '../model.ts';
import { commonOutline, type EntityKind, type EntityOutlineSource, type EntitySearchFields, searchFieldsOf } from './kind.ts';

/** NerdGraph's MobileAppSummaryData, from the model's summary. */
export interface MobileSummarySource {
  appLaunchCount: number;
  crashCount: number;
  crashRate: number;
  httpErrorRate: number;
  httpRequestCount: number;
  httpRequestRate: number;
  /** Seconds. */
  httpResponseTimeAverage: number;
  mobileSessionCount: number;
  networkFailureRate: number;
  usersAffectedCount: number;
}

export interface MobileApplicationSource extends EntityOutlineSource {
  __typename: 'MobileApplicationEntityOutline' | 'MobileApplicationEntity';
  applicationId: number;
  mobileSummary: MobileSummarySource | null;
}

function searchFields(app: SandboxMobileApp): EntitySearchFields {
  return searchFieldsOf('MOBILE', 'APPLICATION', app);
}

export function mobileSummary(summary: SandboxMobileSummary | null): MobileSummarySource | null {
  if (summary === null) return null;
  return {
    appLaunchCount: summary.launchCount,
    crashCount: summary.crashCount,
    crashRate: summary.crashRate,
    httpErrorRate: summary.remoteErrorRate,
    httpRequestCount: summary.httpRequestCount,
    httpRequestRate: summary.throughput,
    httpResponseTimeAverage: summary.responseTimeSeconds,
    mobileSessionCount: summary.sessionCount,
    networkFailureRate: summary.failedCallRate,
    usersAffectedCount: summary.usersAffectedCount,
  };
}

function view(app: SandboxMobileApp, account: EntityOutlineSource['account'], __typename: MobileApplicationSource['__typename']): MobileApplicationSource {
  return {
    ...commonOutline(searchFields(app), account, { __typename, entityType: 'MOBILE_APPLICATION_ENTITY' }, app.lastReportingChangeAt),
    __typename,
    applicationId: app.id,
    mobileSummary: mobileSummary(app.summary),
  };
}

export const mobileApplicationKind: EntityKind<SandboxMobileApp> = {
  domain: 'MOBILE',
  type: 'APPLICATION',
  list: (data) => data.mobileApps,
  searchFields,
  outline: (app, { account }) => view(app, account, 'MobileApplicationEntityOutline'),
  entity: (app, { account }) => view(app, account, 'MobileApplicationEntity'),
};
