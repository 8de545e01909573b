import { retiredMapping } from './shared/retired.ts';

/** A retired v2 route, answered on purpose: mappings/shared/retired.ts. */
export default retiredMapping('notification-channels.list');
