// The decoder moved to src/compare/rails-xml.ts (the gateway's diff engine needs it at run time).
export { decodeRailsXml } from '../../src/compare/rails-xml.ts';
