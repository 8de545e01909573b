/**
 * `npm run sandbox`: starts the sandbox on real HTTP. Configuration comes from the
 * environment (SANDBOX_SEED, SANDBOX_APM_APPS, SANDBOX_API_KEYS, SANDBOX_PORT, SANDBOX_HOST,
 * SANDBOX_DIVERGE, SANDBOX_LEGACY_JITTER);
 * a bad value stops it with a message naming the variable and exit code 1.
 */
import { z } from 'zod';
import { parseApiKeys } from './data.ts';
import { parseDivergences } from './divergence.ts';
import { createSandbox } from './server.ts';
import { keyUserOf } from './users.ts';

const integerText = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const EnvSchema = z.object({
  SANDBOX_SEED: integerText(-2_147_483_648, 4_294_967_295).default(42),
  SANDBOX_APM_APPS: integerText(0, 100_000).default(500),
  SANDBOX_PORT: integerText(0, 65_535).default(8081),
  SANDBOX_HOST: z.string().trim().min(1, 'must not be empty').default('127.0.0.1'),
  SANDBOX_API_KEYS: z
    .string()
    .transform((spec, ctx) => {
      try {
        return parseApiKeys(spec);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    })
    .optional(),
  SANDBOX_DIVERGE: z
    .string()
    .transform((spec, ctx) => {
      try {
        return parseDivergences(spec);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    })
    .default([]),
  SANDBOX_LEGACY_JITTER: z
    .enum(['true', 'false', '1', '0', ''], { error: 'must be true or false' })
    .transform((flag) => flag === 'true' || flag === '1')
    .default(false),
});

function fail(message: string): never {
  process.stderr.write(`sandbox: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  const parsed = EnvSchema.safeParse(process.env);
  if (!parsed.success) {
    fail(`invalid configuration:\n${parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`).join('\n')}`);
  }
  const env = parsed.data;

  let sandbox: ReturnType<typeof createSandbox>;
  try {
    sandbox = createSandbox({
      seed: env.SANDBOX_SEED,
      apmApps: env.SANDBOX_APM_APPS,
      apiKeys: env.SANDBOX_API_KEYS,
      diverge: env.SANDBOX_DIVERGE,
      legacyJitter: env.SANDBOX_LEGACY_JITTER,
    });
  } catch (error) {
    fail((error as Error).message);
  }
  const running = await sandbox.listen(env.SANDBOX_PORT, env.SANDBOX_HOST).catch((error: Error) => fail(error.message));

  const [firstKey] = sandbox.data.keys.keys();
  // The key's user: NerdGraph limits concurrent requests per user, whichever key (users.ts keyUserOf).
  const keyLines = [...sandbox.data.keys].map(([key, accounts]) => `  ${key} -> accounts ${accounts.join(', ')}, user ${keyUserOf(sandbox.data, key).id}`);
  const exampleBody = JSON.stringify({ query: '{ actor { accounts { id name } } }' });
  process.stdout.write(
    [
      `sandbox listening on ${running.url} (seed ${env.SANDBOX_SEED}, ${sandbox.data.apps.length} APM apps)`,
      `NerdGraph divergences: ${env.SANDBOX_DIVERGE.length > 0 ? env.SANDBOX_DIVERGE.join(', ') : 'none'}; legacy jitter: ${env.SANDBOX_LEGACY_JITTER ? 'on' : 'off'}`,
      'API keys:',
      ...keyLines,
      'try:',
      `  curl -s ${running.url}/graphql -H 'content-type: application/json' -H 'Api-Key: ${firstKey ?? ''}' -d '${exampleBody}'`,
      '',
    ].join('\n'),
  );

  const stop = (): void => {
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

void main();
