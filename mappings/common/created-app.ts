import { ID_PATTERN, V2Error, UpstreamError, decodeEntityGuid, objectAt, type BodyObject } from '../../src/mapping-api.ts';
import { CREATED_APP_RULE_TITLES } from '../../facts/rule-titles.ts';

/** Shared by the mobile and browser create routes (docs/write-rules.md §6). */
export const NAME_BLANK = CREATED_APP_RULE_TITLES.nameBlank;
export const NAME_TOO_LONG = CREATED_APP_RULE_TITLES.nameTooLong;

/** The `name` under the first wrapper present; 422 when blank or too long. */
export function createdAppName(body: BodyObject, wrappers: readonly string[]): string {
  const wrapper = wrappers.map((key) => objectAt(body, key)).find((value) => value !== undefined);
  const name = wrapper?.name;
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (trimmed === '') throw new V2Error(422, NAME_BLANK, { kind: 'invalid_create' });
  // Characters, not UTF-16 units: an emoji counts once.
  if ([...trimmed].length > 255) throw new V2Error(422, NAME_TOO_LONG, { kind: 'invalid_create' });
  return trimmed;
}

/** The v2 integer id NerdGraph's GUID encodes (`account|DOMAIN|APPLICATION|id`). */
export function idFromGuid(guid: string): number {
  const domainId = decodeEntityGuid(guid)?.domainId;
  const id = domainId !== undefined && ID_PATTERN.test(domainId) ? Number(domainId) : undefined;
  if (id === undefined) throw new UpstreamError('upstream_failure', 'created application GUID holds no numeric id');
  return id;
}
