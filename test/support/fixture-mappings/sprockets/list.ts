import { z } from 'zod';
import { defineReadPlanMapping, NO_PARAMS, parseAnswer, XML_ASSUMPTION } from '../../../../src/mapping-api.ts';

const OPERATION = 'FixtureSprockets';
const Answer = z.object({ actor: z.object({ accounts: z.array(z.object({ id: z.number().int(), name: z.string() })) }) });

/**
 * Test fixture, translated but passed through by default: GET /v2/fixture_sprockets.{json,xml}
 * lists the accounts the key can read, as sprockets; only a ROUTE_MODES rule that names it
 * (not a catch-all) serves the translation, as for a namespace New Relic keeps alive.
 */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'fixture_sprockets.list',
  method: 'GET',
  route: '/v2/fixture_sprockets.{format}',
  operation: OPERATION,
  summary: 'List fixture sprockets: the accounts of the key, by id',
  // Approximate, with a known gap, so the pages that show a route's fidelity and gaps have one to show.
  fidelity: 'approximate',
  passthroughByDefault: 'Test fixture: a namespace the legacy REST API keeps serving',
  parameters: NO_PARAMS,
  fields: [
    { field: 'sprockets[].id', fidelity: 'exact', source: 'account id' },
    { field: 'sprockets[].name', fidelity: 'exact', source: 'account name' },
  ],
  knownGaps: [
    { description: 'Test fixture: v2 would have listed every account of the organization; the key may see fewer.' },
    { description: 'Test fixture: account names are as NerdGraph spells them, which may differ from what v2 showed.' },
  ],
  assumptions: [XML_ASSUMPTION],
  async load(ctx) {
    const { accounts } = parseAnswer(Answer, await ctx.read(OPERATION, {}), OPERATION).actor;
    return { body: { sprockets: accounts.map(({ id, name }) => ({ id, name })).sort((a, b) => a.id - b.id) } };
  },
});
