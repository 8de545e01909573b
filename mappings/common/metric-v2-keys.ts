import type { V2KeyPaths, V2KeyType } from '../../src/mapping-api.ts';

/** SHAPES §4; SW MetricDataResponseType (metrics_found typed string there; SHAPES: an array). */
const METRIC_DATA_PATHS: Record<string, V2KeyType> = {
  from: 'time',
  to: 'time',
  metrics_not_found: 'string[]',
  metrics_found: 'string[]',
  'metrics[].name': 'string',
  'metrics[].timeslices[].from': 'time',
  'metrics[].timeslices[].to': 'time',
  'metrics[].timeslices[].values': 'object',
};

/** The metric_data object of every metric data route. */
export const METRIC_DATA_KEYS: V2KeyPaths = { wrapper: 'metric_data', list: false, source: 'SHAPES §4; SW MetricDataResponseType, MetricResponse, TimesliceResponse', paths: METRIC_DATA_PATHS };

/** The metrics list of every metric names route: SHAPES §3. */
export const METRIC_NAMES_KEYS: V2KeyPaths = { wrapper: 'metrics', list: true, source: 'SHAPES §3; SW MetricParserResponseType', paths: { name: 'string', values: 'string[]' } };
