import { z } from 'zod';

/**
 * The zod schemas of NerdGraph entities, one per entity kind, built from shared cores so a
 * field every kind carries is written once. Each mapping's own schema extends the kind's core
 * with what its route reads (summaries, settings, tags).
 */

/** An entity outline: its GUID and account (the account check), its name and its health, in NerdGraph's order. */
export const EntityOutline = z.object({
  guid: z.string(),
  accountId: z.number().int(),
  name: z.string(),
  reporting: z.boolean().nullable().optional(),
  alertSeverity: z.string().nullable().optional(),
});

/** The outline without the name: what a tag read asks for. */
export const EntityHealth = EntityOutline.omit({ name: true });

/** An application entity (APM or mobile): the outline plus its v2 id. */
export const ApplicationOutline = EntityOutline.extend({ applicationId: z.number().int() });

/** An APM application: an application outline plus its agent language. */
export const ApmOutline = ApplicationOutline.extend({ language: z.string().nullable().optional() });
