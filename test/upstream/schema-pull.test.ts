import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildClientSchema, parse, validate, type IntrospectionQuery } from 'graphql';
import { afterAll, describe, expect, it } from 'vitest';
import { json, startFakeUpstream } from '../support/fake-upstream.ts';
import { DEMO_KEY, startSandbox } from '../support/harness.ts';

/**
 * `npm run schema:pull` as a newcomer runs it: a real process introspecting a NerdGraph over
 * loopback (the sandbox answers introspection like NerdGraph does) and writing a schema file the
 * schema tests can use, with the key only ever in the Api-Key header.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'schema-pull-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function pull(env: Record<string, string>, out: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/schema-pull.ts', '--out', out],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run schema:pull', () => {
  it('writes an introspection the schema tests can validate documents against', async () => {
    const sandbox = await startSandbox({ apmApps: 5 });
    try {
      const out = join(work, 'schema.json');
      const run = await pull({ NERDGRAPH_URL: sandbox.graphqlUrl, NEW_RELIC_API_KEY: DEMO_KEY }, out);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^schema:pull: wrote .*schema\.json \(\d+ types\) from http:\/\/127\.0\.0\.1:\d+\/graphql\n$/);
      expect(run.stdout).not.toContain(DEMO_KEY);
      const schema = buildClientSchema((JSON.parse(readFileSync(out, 'utf8')) as { data: IntrospectionQuery }).data);
      expect(validate(schema, parse('{ actor { user { name } } }'))).toEqual([]);
      expect(validate(schema, parse('{ actor { nickname } }')).map((e) => e.message)).toEqual(['Cannot query field "nickname" on type "Actor".']);
    } finally {
      await sandbox.close();
    }
  });

  it('sends the key only as Api-Key and never prints it, even when the server quotes it back', async () => {
    const key = 'NRAK-PULLTESTSECRET0123456789';
    const upstream = await startFakeUpstream((request, res) =>
      json(res, 401, { errors: [{ message: `Bad API Key ${String(request.headers['api-key'])}` }] }),
    );
    try {
      const run = await pull({ NERDGRAPH_URL: upstream.url, NEW_RELIC_API_KEY: key }, join(work, 'refused.json'));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('answered 401: Bad API Key [redacted]');
      expect(`${run.stdout}${run.stderr}`).not.toContain(key);
      expect(upstream.received).toHaveLength(1);
      expect(upstream.received[0]?.headers['api-key']).toBe(key);
      expect(upstream.received[0]?.query).toContain('__schema');
    } finally {
      await upstream.close();
    }
  });

  it('says what to set when no key or no NerdGraph is configured', async () => {
    const noKey = await pull({ NEW_RELIC_REGION: 'us' }, join(work, 'nokey.json'));
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain('set NEW_RELIC_API_KEY');
    const noUrl = await pull({ NEW_RELIC_API_KEY: 'NRAK-X' }, join(work, 'nourl.json'));
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toContain('set NEW_RELIC_REGION=us (or eu), or NERDGRAPH_URL');
  });
});
