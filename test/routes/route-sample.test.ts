import { describe, expect, it } from 'vitest';
import { isReadMapping, type ReadSample, type ReadSampleValue, type WriteMapping, type WriteSampleValue } from '../../src/routes/mapping.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import { fillJson, fillQuery, samplePath } from '../../src/routes/route-sample.ts';

/**
 * The samples the probe and the cost table send (ReadSample, WriteSample of
 * src/routes/mapping-base.ts), filled by src/routes/route-sample.ts: the rules, and every route's
 * sample filled with a value for each name the tools' fixtures find.
 */
const READ_VALUES: Record<ReadSampleValue, string> = {
  application_id: '11',
  host_id: '12',
  instance_id: '13',
  key_transaction_id: '14',
  mobile_application_id: '15',
  user_id: '16',
  policy_id: '17',
  nrql_policy_id: '18',
  nrql_condition_id: '19',
  from: '2026-11-22T11:25:00+00:00',
  to: '2026-11-22T11:55:00+00:00',
};
const WRITE_VALUES: Record<WriteSampleValue, string | number> = {
  call: 'cold',
  reporting_app_id: 21,
  silent_app_id: 22,
  channel_to_delete_id: 23,
  channel_to_link_id: 24,
  unlinked_policy_id: 25,
  policy_to_rename_id: 26,
  policy_to_delete_id: 27,
  incident_to_acknowledge_id: 28,
  incident_to_close_id: 29,
  nrql_policy_id: 30,
  nrql_condition_to_update_id: 31,
  nrql_condition_to_delete_id: 32,
  apm_condition_id: 33,
  external_service_condition_id: 34,
  synthetics_condition_id: 35,
  location_failure_condition_id: 36,
};

describe('a sample filled with its values', () => {
  it('fills each path parameter from the sample or by its own name, encodes the values only, and appends the query', () => {
    const sample: ReadSample = { path: { id: '{application_id}' }, query: 'names[]=A/B&from={from}' };
    expect(samplePath('/v2/applications/{id}/hosts/{host_id}/metrics/data.{format}', sample, READ_VALUES)).toBe(
      '/v2/applications/11/hosts/12/metrics/data.json?names[]=A/B&from=2026-11-22T11%3A25%3A00%2B00%3A00',
    );
    expect(samplePath('/v2/labels/{key}.{format}', { path: { key: 'Costs:{call}' } }, WRITE_VALUES, 'xml')).toBe('/v2/labels/Costs:cold.xml');
  });

  it('names the first value missing and the parameter it fills, in the path or the query', () => {
    const values = { ...READ_VALUES, host_id: undefined, nrql_policy_id: undefined };
    expect(samplePath('/v2/applications/{id}/hosts/{host_id}.{format}', { path: { id: '{application_id}' } }, values)).toEqual({ value: 'host_id', where: 'path', parameter: 'host_id' });
    expect(samplePath('/v2/alerts_nrql_conditions.{format}', { query: 'policy_id={nrql_policy_id}' }, values)).toEqual({ value: 'nrql_policy_id', where: 'query', parameter: 'policy_id' });
    expect(fillQuery('a=1&b={policy_id}', values)).toBe('a=1&b=17');
  });

  it('refuses a placeholder, or a path parameter no sample names, that is no sample value', () => {
    expect(() => samplePath('/v2/things.{format}', { query: 'id={thing_id}' }, READ_VALUES)).toThrow(/\{thing_id\}/);
    expect(() => samplePath('/v2/things/{id}.{format}', undefined, READ_VALUES)).toThrow(/\{id\}/);
  });

  it('keeps an id a body names alone a number, and writes the others into their text', () => {
    const body = { label: { name: 'costs {call}', links: { applications: ['{reporting_app_id}'] }, threshold: 0.7, enabled: true, none: null } };
    expect(fillJson(body, WRITE_VALUES)).toEqual({ label: { name: 'costs cold', links: { applications: [21] }, threshold: 0.7, enabled: true, none: null } });
    expect(() => fillJson({ name: '{call}' }, { call: undefined })).toThrow(/\{call\}/);
  });
});

describe("every route's sample", () => {
  it('fills, for every read route and every write, with the values the fixtures find; every write has one', async () => {
    const mappings = await loadMappings();
    const unfilled: string[] = [];
    for (const mapping of mappings.filter(isReadMapping)) {
      try {
        if (typeof samplePath(mapping.route, mapping.sample, READ_VALUES) !== 'string') unfilled.push(mapping.id);
      } catch (error) {
        unfilled.push(`${mapping.id}: ${(error as Error).message}`);
      }
    }
    const writes = mappings.filter((mapping): mapping is WriteMapping => mapping.kind === 'write');
    for (const mapping of writes) {
      try {
        if (mapping.sample === undefined || typeof samplePath(mapping.route, mapping.sample, WRITE_VALUES, mapping.sample.format) !== 'string') unfilled.push(mapping.id);
        if (mapping.sample?.body !== undefined && 'json' in mapping.sample.body) fillJson(mapping.sample.body.json, WRITE_VALUES);
      } catch (error) {
        unfilled.push(`${mapping.id}: ${(error as Error).message}`);
      }
    }
    expect(unfilled).toEqual([]);
    // A write measured after another names one that exists.
    const ids = new Set(writes.map((mapping) => mapping.id));
    expect(writes.flatMap((mapping) => (mapping.sample?.after === undefined || ids.has(mapping.sample.after) ? [] : [mapping.id]))).toEqual([]);
  });
});
