import { defineWriteMapping } from '../src/routes/mapping.ts';
import { AlertIncidentTitles, V2Error } from '../src/v2/errors.ts';
import { NO_PARAMS } from '../src/v2/param-schema.ts';
import { XML_ASSUMPTION } from '../src/v2/xml.ts';
import { confirmedAction, findIssue, policyIdsOf, readPolicies, rereadIssue, v2Incident } from './shared/ai-issues.ts';

/** PUT /v2/alerts_incidents/{id}/acknowledge.{json,xml}: aiIssuesAckIssue on the issue the derived id names. */
export default defineWriteMapping({
  kind: 'write',
  id: 'alerts-incidents.acknowledge',
  method: 'PUT',
  route: '/v2/alerts_incidents/{id}/acknowledge.{format}',
  operation: 'AlertIncidentAcknowledge',
  summary: 'Acknowledge an incident: find the issue by its derived id (scan of 90 days, stopping at the match), one aiIssuesAckIssue, then read it back',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: 'The incident may have been acknowledged, but New Relic did not confirm it: list the incidents before retrying',
  parameters: NO_PARAMS,
  fields: [{ field: 'incident', fidelity: 'approximate', source: 'the issue read back after aiIssuesAckIssue, shaped as alerts_incidents lists it' }],
  knownGaps: [
    {
      description:
        'Incident ids are derived from NerdGraph issue UUIDs; the id is looked up among the issues opened in the last 90 days (a choice: NerdGraph documents no retention), at most 50 NerdGraph pages, stopping at the match; older or deeper ones are 404.',
    },
    { description: 'Violation ids are derived from NerdGraph incident UUIDs, not v2 ids.' },
    { description: 'When NerdGraph may have applied the change but did not confirm it, the answer is a 502/503/504 saying so; the gateway never resends.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    'No body is read (v2 took none); success is 200 with {"incident": ...}.',
    "An incident already closed is 422 'Incident already closed' (v2's answer unconfirmed); nothing is sent.",
    'The mutation counts as confirmed only when its result names the same account, action and issue; windows end a minute after now (clock skew).',
  ],
  async plan(ctx) {
    const issue = await findIssue(ctx, ctx.pathParams.id);
    if (issue.closedAt !== null && issue.closedAt !== undefined) throw new V2Error(422, AlertIncidentTitles.alreadyClosed, { kind: 'invalid_parameter' });
    return {
      variables: { accountId: ctx.accountId, issueId: issue.issueId },
      answer: async (payload) => {
        confirmedAction(payload, 'aiIssuesAckIssue', 'AlertIncidentAcknowledge', issue.issueId, ctx.accountId);
        const after = await rereadIssue(ctx, issue.issueId, issue.createdAt);
        return { incident: v2Incident(after, await readPolicies(ctx, policyIdsOf([after])), true) };
      },
    };
  },
});
