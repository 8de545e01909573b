import { type V2KeyType, v2KeysOf } from '../../src/mapping-api.ts';

/** SHAPES §2; SW AppSummaryDataResponse, EndUserSummaryDataResponse. */
const TOPOLOGY_SUMMARIES: Record<string, V2KeyType> = {
  'application_summary?': 'object',
  'application_summary?.response_time': 'num',
  'application_summary?.throughput': 'num',
  'application_summary?.error_rate': 'num',
  'application_summary?.apdex_score': 'num',
  'application_summary?.instance_count': 'int',
  'end_user_summary?': 'object',
  'end_user_summary?.response_time': 'num',
  'end_user_summary?.throughput': 'num',
  'end_user_summary?.apdex_score': 'num',
};

/** SHAPES §2 Host; SW ApplicationHostResponseType (language: SHAPES, a string). */
const HOST: Record<string, V2KeyType> = {
  id: 'int',
  application_name: 'string',
  host: 'string',
  language: 'string',
  health_status: 'string',
  ...TOPOLOGY_SUMMARIES,
  links: 'object',
  'links.application': 'int',
  'links.application_instances': 'int[]',
  'links.server': 'int',
};
const HOST_SOURCE = 'SHAPES §2 (Host); SW ApplicationHostResponseType, ApplicationHostLinksResponse';

/** SHAPES §2 Inst; SW ApplicationInstanceResponseType; CG application_instances_test.go. */
const INSTANCE: Record<string, V2KeyType> = {
  id: 'int',
  application_name: 'string',
  host: 'string',
  port: 'int',
  language: 'string',
  health_status: 'string',
  ...TOPOLOGY_SUMMARIES,
  links: 'object',
  'links.application': 'int',
  'links.application_host': 'int',
  'links.server': 'int',
};
const INSTANCE_SOURCE = 'SHAPES §2 (Inst); SW ApplicationInstanceResponseType, ApplicationInstanceLinksResponse; CG pkg/apm/application_instances_test.go';

/** A host's keys under `wrapper`. */
export const hostKeys = v2KeysOf(HOST_SOURCE, HOST);

/** An instance's keys under `wrapper`. */
export const instanceKeys = v2KeysOf(INSTANCE_SOURCE, INSTANCE);
