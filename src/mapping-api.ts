/**
 * The mapping API: everything a module in mappings/ may use from the gateway, in one place.
 * Mappings import this module (and helpers in mappings/), never src/ files one by one, so the
 * machinery behind it can move without touching a route (test/architecture).
 */
export { redactKeys } from './ops/redact.ts';
export { repeatedCursor, walkCursors, type Walked, type WalkOptions } from './routes/cursor-walk.ts';
export { EntityKinds, type EntityRef } from './routes/entity-ref.ts';
export { pageCount, pageOfList, pageOfPrefix, pageOfWalk, pastTheCount, withLink } from './routes/paging.ts';
export { type CallerScope, defineListMapping, defineMetricDataMapping, defineMetricNamesMapping, definePassthroughMapping, defineReadPlanMapping, defineShowMapping, defineUnsupportedMapping, defineWriteMapping, type FieldNote, fieldNotesUnder, type KnownGap, type MetricTarget, type OperationContext, type PageReadContext, type PlannedAnswer, type ReadOptions, type ReadSample, type ReadSampleValue, type ResolvedWithin, type ReshapeContext, type TargetWithin, type TimesliceTarget, type TimesliceTargetContext, type UnsupportedMapping, type V2KeyPaths, type V2KeyType, v2KeysOf, type WriteMapping, type WritePlan, type WriteSample, type WriteSampleValue } from './routes/mapping.ts';
export { MAX_PAGES_WALKED } from './routes/search-pages.ts';
export { type LabelChange, type RememberedDeployment, type RememberedLabelChange } from './state/recent-writes.ts';
export { NrqlResults, parseAnswer } from './upstream/answer.ts';
export { checkedParse, checkedParseOrThrow } from './upstream/compiled-check.ts';
export { type Condition, entityQuery } from './upstream/entity-query.ts';
export { deepFreeze } from './upstream/micro-cache.ts';
export { boundedMemo } from './v2/bounded-memo.ts';
export { OverBudget, UpstreamError } from './upstream/errors.ts';
export { expandFormula, MAX_UNIQUES, type NrqlEquality, nrqlAlias, nrqlAttribute, type SelectItem, sinceUntil, TIMESLICE_VALUE, timesliceWhere, UNSCOPED_ROWS } from './upstream/nrql.ts';
export { hasControlCharacters, nrqlLiteral } from './upstream/query-literal.ts';
export { invalidParameter, notFound, V2Error, writeRefused } from './v2/errors.ts';
export { linkHeader } from './v2/link.ts';
export { type V2Body, type V2Format } from './v2/format.ts';
export { decodeEntityGuid, derivedV2Id, entityGuid, fnv1a32 } from './v2/ids.ts';
export { defineParams, NO_PARAMS, param } from './v2/param-schema.ts';
export { ID_PATTERN, v2IdOf, type V2Params } from './v2/params.ts';
export { type BodyObject, type BodyValue, isBodyObject, objectAt, type RequestBodyKind } from './v2/request-body.ts';
export { RETIRED, RETIRED_ROUTES, type RetiredFamily, type RetiredFamilyName } from './v2/retired.ts';
export { isoSeconds } from './v2/time.ts';
export { parseV2Time } from './v2/timestamps.ts';
export { type JsonValue, toXml, XML_ASSUMPTION, type XmlLayout } from './v2/xml.ts';
