import { derivedV2Id } from '../../src/mapping-api.ts';

/**
 * The v2 integer id of a deployment, derived from its NerdGraph change-tracking id:
 * derivedV2Id's scheme without salt (positive, below 2^53, the same for the same event in every
 * listing). v2's own deployment ids are not recoverable.
 */
export function deploymentV2Id(changeTrackingId: string): number {
  return derivedV2Id(changeTrackingId);
}
