import { type V2KeyType, v2KeysOf } from '../../src/mapping-api.ts';

/** SHAPES §8 Mob; SW MobileApplicationResponseType. */
const MOBILE: Record<string, V2KeyType> = {
  id: 'int',
  name: 'string',
  health_status: 'string',
  reporting: 'bool',
  'last_reported_at?': 'time',
  'mobile_summary?': 'object',
  'mobile_summary?.active_users': 'int',
  'mobile_summary?.launch_count': 'int',
  'mobile_summary?.throughput': 'num',
  'mobile_summary?.response_time': 'num',
  'mobile_summary?.calls_per_session': 'num',
  'mobile_summary?.interaction_time': 'num',
  'mobile_summary?.failed_call_rate': 'num',
  'mobile_summary?.remote_error_rate': 'num',
  // Left out with mobile_summary when the app has no recent data (SHAPES §8 says so of
  // mobile_summary; mappings/mobile-applications/mobile-application.ts takes crash_summary alike).
  'crash_summary?': 'object',
  'crash_summary?.supports_crash_data': 'bool',
  'crash_summary?.unresolved_crash_count': 'int',
  'crash_summary?.crash_count': 'int',
  'crash_summary?.crash_rate': 'num',
};
const MOBILE_SOURCE = 'SHAPES §8 (Mob); SW MobileApplicationResponseType';

/** A mobile application's keys under `wrapper`. */
export const mobileApplicationKeys = v2KeysOf(MOBILE_SOURCE, MOBILE);
