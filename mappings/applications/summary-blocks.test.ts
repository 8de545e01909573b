import { describe, expect, it } from 'vitest';
import { checkedParse } from '../../src/mapping-api.ts';
import { ApmEntity, reshapeApplication, type ReshapeOptions } from './application.ts';

const OPTIONS: ReshapeOptions = { links: null, browserApdexTarget: null, realUserMonitoring: false, endUserApdexScore: null };
const CTX = { accountId: 1, now: Date.UTC(2026, 11, 4, 12, 0, 30) };

/** An entity as the gateway reads it: the answer passed through its schema's check, so it keeps keys the schema does not name. */
function reshaped(summaries: { apmSummary?: unknown; apmBrowserSummary?: unknown }): Record<string, unknown> {
  const parsed = checkedParse(ApmEntity, { guid: 'g', accountId: 1, name: 'app', applicationId: 7, reporting: true, ...summaries });
  if (!parsed.success) throw new Error('fixture entity refused');
  return reshapeApplication(parsed.data, CTX, OPTIONS) as Record<string, unknown>;
}

describe('application summaries: a block only when NerdGraph gave one of its own values', () => {
  const nulls = { responseTimeAverage: null, throughput: null, errorRate: null, apdexScore: null, hostCount: null, instanceCount: null };

  it('leaves out application_summary for a summary of nulls, whatever keys beyond the schema it holds', () => {
    expect(reshaped({ apmSummary: nulls })).not.toHaveProperty('application_summary');
    expect(reshaped({ apmSummary: { ...nulls, notInTheSchema: 5 } })).not.toHaveProperty('application_summary');
  });

  it('sends application_summary, every key, when one value is given', () => {
    const app = reshaped({ apmSummary: { ...nulls, hostCount: 2 } });
    expect(app.application_summary).toEqual({ response_time: null, throughput: null, error_rate: null, apdex_target: null, apdex_score: null, host_count: 2, instance_count: null, concurrent_instance_count: null });
  });

  it('leaves out end_user_summary for a browser summary of nulls, and sends it for one value', () => {
    const browserNulls = { pageLoadTimeAverage: null, pageLoadThroughput: null };
    expect(reshaped({ apmBrowserSummary: { ...browserNulls, notInTheSchema: 1 } })).not.toHaveProperty('end_user_summary');
    expect(reshaped({ apmBrowserSummary: { ...browserNulls, pageLoadThroughput: 30 } }).end_user_summary).toEqual({ response_time: null, throughput: 30, apdex_target: null, apdex_score: null });
  });
});
