/** The mapping kinds that own their logic (read plans, writes) and those that send nothing (unsupported, passthrough). */
import type { V2Status } from '../v2/errors.ts';
import type { BodyObject, RequestBodyKind } from '../v2/request-body.ts';
import type { V2Body, V2Format } from '../v2/format.ts';
import type { V2Params } from '../v2/params.ts';
import type { CallerScope, MappingBase, ReadMappingBase, WriteSample } from './mapping-base.ts';

/**
 * What a read-plan or write mapping gets: the parsed request, and reads through the caller's
 * key. `read` refuses mutations, so a write mapping's only mutation is the one the runner sends.
 */
export interface OperationContext extends CallerScope {
  format: V2Format;
  pathParams: Readonly<Record<string, string>>;
  /** Query string and form body parameters (v2 spellings normalised). */
  params: V2Params;
  /** The parsed write body (JSON, XML or form); empty for reads. */
  body: BodyObject;
  /** How the write body arrived (labels: the Rails XML list rule is for XML only); 'none' for reads. */
  bodyKind?: RequestBodyKind;
  /** Absolute URL as the client should see it, for Link headers. */
  publicUrl: string;
}

export interface PlannedAnswer {
  body: V2Body;
  headers?: Record<string, string>;
}

/** A read whose logic the mapping owns (e.g. deployments over NRQL): one `load` per request. */
export interface ReadPlanMapping extends ReadMappingBase {
  kind: 'read-plan';
  load(ctx: OperationContext): Promise<PlannedAnswer>;
}

/**
 * A write: validation and the reads its rules need, then its mutations, each sent exactly once.
 * Most writes are one step (`answer`). A write v2 did in one call that NerdGraph needs several
 * mutations for (a label on three applications, a channel that needs its destination first)
 * chains steps with `next`: each step is sent only once the one before it was confirmed, and
 * gets that step's payload.
 */
interface WriteStep {
  /** Variables of this step's mutation; null when there is nothing to write. */
  variables: Record<string, unknown> | null;
  /** This step's mutation: the mapping's `operation` unless named (then one of its `stepOperations`). */
  operation?: string;
}

export type WritePlan = WriteStep &
  (
    | {
        /** The v2 answer once NerdGraph confirmed the last step (payload null when nothing was written). */
        answer(payload: unknown): Promise<V2Body> | V2Body;
        next?: undefined;
      }
    | {
        /**
         * The step after this one, given this one's confirmed payload (null when it wrote
         * nothing). Once any step was sent, every failure after it answers the mapping's
         * `unconfirmedTitle` (never "nothing was changed"), and nothing is resent.
         */
        next(payload: unknown): Promise<WritePlan> | WritePlan;
        answer?: undefined;
      }
  );

export interface WriteMapping extends MappingBase {
  kind: 'write';
  successStatus: 200 | 201;
  /**
   * Answer title when NerdGraph may have applied the write (or, for a chained write, part of
   * it) but did not confirm it.
   */
  unconfirmedTitle: string;
  /**
   * A chained write only: answer title (409, which clients do not retry) when a later step was
   * refused or not sent, so the earlier steps are known applied and this one known not: the
   * outcome is certain but partial, and a retry would repeat the earlier steps. Absent: such a
   * failure answers `unconfirmedTitle` (502) like any other after a step went out.
   */
  partialTitle?: string;
  /** The mutations a chained plan's later steps may name besides `operation` (queries/<name>.graphql each). */
  stepOperations?: readonly string[];
  /** Validates the request (throws V2Error), reads what the rules need, plans the mutation. */
  plan(ctx: OperationContext): Promise<WritePlan>;
  /** A body format of its own (Deployments v0 XML); default: the v2 serialiser. */
  serialise?(body: V2Body, format: V2Format): string;
  /** The sample `npm run compat -- --costs` measures the write with; it refuses a write without one. */
  sample?: WriteSample;
}

/** A v2 route NerdGraph cannot serve: always the same clear v2 error. */
export interface UnsupportedMapping extends MappingBase {
  kind: 'unsupported';
  status: V2Status;
  /** The error title: what is gone (since when, where known) and what to use instead. */
  title: string;
  /** Why the gateway cannot serve the route (the product retired, no NerdGraph equivalent, ...). */
  reason: string;
  /** What to use instead: the NerdGraph operation or product that replaces the route. */
  replacement: string;
}

/**
 * A v2 route New Relic keeps alive after the end of life (the alert namespaces): never
 * translated, always forwarded unchanged to the legacy REST API (src/modes/passthrough.ts).
 * One template, several methods; `method` is the first of them, for code that reads one.
 */
export interface PassthroughMapping extends MappingBase {
  kind: 'passthrough';
  fidelity: 'passthrough';
  methods: readonly [PassthroughMethod, ...PassthroughMethod[]];
  /** Why the route is passed through rather than translated. */
  reason: string;
}

export type PassthroughMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The placeholder operation of passthrough routes: they send nothing to NerdGraph. */
export const PASSTHROUGH_OPERATION = '(passthrough)';

// Method syntax keeps parameters bivariant, so any EntityListMapping<P> is a Mapping.
