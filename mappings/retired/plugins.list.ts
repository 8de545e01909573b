import { retiredMapping } from './retired.ts';

/** A retired v2 route, answered on purpose: mappings/retired/retired.ts. */
export default retiredMapping('plugins.list');
