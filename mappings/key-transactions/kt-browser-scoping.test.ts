import { afterEach, describe, expect, it } from 'vitest';
import { entityGuid } from '../../src/v2/ids.ts';
import { accountsAnswer, json, startFakeUpstream } from '../../test/support/fake-upstream.ts';
import { DEMO_KEY, createTestGateway } from '../../test/support/harness.ts';

/**
 * Account scoping of what the details reads return (the differential cannot see it: the
 * sandbox never answers out of account): an entity of another account in entities(guids), or
 * a KT whose parent app is in another account, is never shown, and each is counted.
 */
const ACCOUNT = 1000001;
const OTHER = 2000002;
const demo = { 'X-Api-Key': DEMO_KEY };

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const browserGuid = (account: number, id: number) => entityGuid(account, 'BROWSER', 'APPLICATION', id);
const ktGuid = (account: number, id: number) => entityGuid(account, 'APM', 'KEY_TRANSACTION', id);

function keyTransaction(account: number, id: number, appAccount: number) {
  return {
    guid: ktGuid(account, id),
    accountId: account,
    name: `KT ${id}`,
    reporting: false,
    alertSeverity: 'NOT_ALERTING',
    apdexTarget: 0.5,
    browserApdexTarget: null,
    metricName: 'WebTransaction/Uri/kt/x',
    application: {
      guid: entityGuid(appAccount, 'APM', 'APPLICATION', 77),
      entity: { guid: entityGuid(appAccount, 'APM', 'APPLICATION', 77), accountId: appAccount, applicationId: 77 },
    },
  };
}

async function gatewayOver(answers: Record<string, unknown>) {
  const upstream = await startFakeUpstream((request, res) => {
    if (request.operationName === 'AccessibleAccounts') return json(res, 200, accountsAnswer([ACCOUNT]));
    json(res, 200, { data: answers[request.operationName ?? ''] ?? null });
  });
  close = upstream.close;
  return createTestGateway({ nerdgraphUrl: upstream.url });
}

const searchOf = (guids: string[]) => ({
  actor: { entitySearch: { count: guids.length, results: { nextCursor: null, entities: guids.map((guid, i) => ({ guid, accountId: ACCOUNT, name: `N${i}`, applicationId: 1 + i })) } } },
});

describe('details reads are account-checked', () => {
  it('a browser app whose details come back from another account shows no key or loader', async () => {
    const mine = browserGuid(ACCOUNT, 1);
    const gateway = await gatewayOver({
      BrowserApplicationsSearch: searchOf([mine]),
      // The same GUID, but NerdGraph says it belongs elsewhere: not trusted.
      BrowserApplicationDetails: { actor: { b0: [{ guid: mine, accountId: OTHER, applicationId: 1, browserProperties: { jsConfig: { licenseKey: 'leak' }, jsLoaderScript: '<script>leak</script>' } }] } },
    });
    const body = (await (await gateway.app.request('/v2/browser_applications.json', { headers: demo })).json()) as { browser_applications: unknown[] };
    expect(body.browser_applications).toEqual([{ id: 1, name: 'N0', browser_monitoring_key: null, loader_script: null }]);
    expect((await gateway.metrics.scopeViolations.get()).values.reduce((n, v) => n + v.value, 0)).toBe(1);
  });

  it('a key transaction missing from its details read, or whose parent app is in another account, shows no foreign data', async () => {
    const [first, second] = [ktGuid(ACCOUNT, 1), ktGuid(ACCOUNT, 2)];
    const gateway = await gatewayOver({
      KeyTransactionsSearch: searchOf([first, second]),
      KeyTransactionDetails: { actor: { b0: [keyTransaction(ACCOUNT, 1, OTHER), keyTransaction(OTHER, 2, OTHER)], account: { summary: { results: [] } } } },
    });
    const body = (await (await gateway.app.request('/v2/key_transactions.json', { headers: demo })).json()) as { key_transactions: Array<Record<string, unknown>> };
    // The second KT's details came back from another account: it is left out of the page.
    expect(body.key_transactions.map((kt) => kt.id)).toEqual([1]);
    // The parent app of another account is not trusted, nor the id in its GUID.
    expect(body.key_transactions[0]!.links).toEqual({ application: null });
    expect((await gateway.metrics.scopeViolations.get()).values.reduce((n, v) => n + v.value, 0)).toBe(2);
  });

  it('KT show does not trust a parent app whose accountId matches but whose GUID is of another account', async () => {
    const kt = keyTransaction(ACCOUNT, 5, ACCOUNT);
    // accountId says "mine", the GUID says otherwise: the GUID wins, as on the list.
    kt.application = { guid: entityGuid(OTHER, 'APM', 'APPLICATION', 77), entity: { guid: entityGuid(OTHER, 'APM', 'APPLICATION', 77), accountId: ACCOUNT, applicationId: 77 } };
    const gateway = await gatewayOver({ KeyTransactionByGuid: { actor: { entity: kt, account: { summary: { results: [] } } } } });
    const body = (await (await gateway.app.request('/v2/key_transactions/5.json', { headers: demo })).json()) as { key_transaction: Record<string, unknown> };
    expect(body.key_transaction.links).toEqual({ application: null });
    expect((await gateway.metrics.scopeViolations.get()).values.reduce((n, v) => n + v.value, 0)).toBe(1);
  });

  it('KT show answers 404 when NerdGraph returns a KT of another account for the computed GUID', async () => {
    const gateway = await gatewayOver({ KeyTransactionByGuid: { actor: { entity: keyTransaction(OTHER, 5, OTHER), account: { summary: { results: [] } } } } });
    const response = await gateway.app.request('/v2/key_transactions/5.json', { headers: demo });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { title: 'No key transaction found with the given ID' } });
  });
});
