import { type V2KeyType, v2KeysOf } from '../../src/mapping-api.ts';

const APP_SUMMARY = {
  'application_summary?': 'object',
  'application_summary?.response_time': 'num',
  'application_summary?.throughput': 'num',
  'application_summary?.error_rate': 'num',
  'application_summary?.apdex_target': 'num',
  'application_summary?.apdex_score': 'num',
  'application_summary?.host_count': 'int',
  'application_summary?.instance_count': 'int',
  'application_summary?.concurrent_instance_count': 'int',
} as const;

const END_USER_SUMMARY = {
  'end_user_summary?': 'object',
  'end_user_summary?.response_time': 'num',
  'end_user_summary?.throughput': 'num',
  'end_user_summary?.apdex_target': 'num',
  'end_user_summary?.apdex_score': 'num',
} as const;

/** SHAPES §1; SW ApplicationResponseType; CG applications_test.go testApplicationJson. */
const APPLICATION: Record<string, V2KeyType> = {
  id: 'int',
  name: 'string',
  language: 'string',
  health_status: 'string',
  reporting: 'bool',
  // SHAPES §1: "may be absent for an app that never reported".
  'last_reported_at?': 'time',
  ...APP_SUMMARY,
  ...END_USER_SUMMARY,
  settings: 'object',
  'settings.app_apdex_threshold': 'num',
  'settings.end_user_apdex_threshold': 'num',
  'settings.enable_real_user_monitoring': 'bool',
  'settings.use_server_side_config': 'bool',
  // The list's exclude_links=true drops them; the default sends them.
  links: 'object',
  'links.application_instances': 'int[]',
  'links.servers': 'int[]',
  'links.application_hosts': 'int[]',
  'links.alert_policy': 'int',
};
const APPLICATION_SOURCE = 'SHAPES §1; SW ApplicationResponseType; CG pkg/apm/applications_test.go testApplicationJson';

/** An application's keys under `wrapper`. */
export const applicationKeys = v2KeysOf(APPLICATION_SOURCE, APPLICATION);
