import { type OperationContext, EntityKinds, type EntityRef } from '../../src/mapping-api.ts';
import { EntityTitles } from './entity-titles.ts';

/** The APM app's GUID in the caller's account (404 for a malformed id). */
export function applicationGuid(ctx: OperationContext, rawId: string | undefined): EntityRef {
  return ctx.entityRef(EntityKinds.apmApplication, rawId, EntityTitles.applicationNotFound);
}
