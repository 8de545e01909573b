/**
 * How the mobile metric routes select a mobile app's timeslice rows: by its GUID under both
 * spellings, `(entityGuid = '<guid>' OR entity.guid = '<guid>')`.
 *
 * Evidence: the public nr1 nerdpack code that reads mobile timeslices filters on `entityGuid`
 * (khpeet/nr1-mobile-lite, nerdlets/home/overview.js: `... FROM Metric WHERE (entityGuid = '${entity.guid}') AND
 * (metricTimesliceName = 'Session/Start') ...`, and the same for Mobile/FailedCallRate and
 * External/{requestDomain}/all); the APM timeslice attribute table ("Query APM metric timeslice
 * data with NRQL") lists `entity.guid`, and no document lists the mobile rows' attributes. Both
 * spellings cost nothing and match whichever the rows carry; `npm run probe` can settle it.
 */
export const MOBILE_GUID_ATTRIBUTES = ['entityGuid', 'entity.guid'] as const;

export const MOBILE_ROWS_ASSUMPTION =
  "Mobile timeslices are selected by the mobile GUID as entityGuid OR entity.guid: public nr1 nerdpack code that reads mobile timeslices (khpeet/nr1-mobile-lite, nerdlets/home/overview.js) filters on entityGuid, the APM attribute table names entity.guid (UNCONFIRMED which mobile rows carry, probes: mobile-rows-carry-entityGuid, mobile-rows-carry-entity-guid; whether they carry appId is UNCONFIRMED too, no probe: the gateway does not read mobile rows by appId, routes-next.md §3).";
