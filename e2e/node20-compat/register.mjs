// Preloaded with `node --import` by the conformance test (conformance_test.go).
// @modelcontextprotocol/conformance imports `globSync` from "fs", which only
// exists from Node.js 22 on (the suite uses it solely for `tier-check`).
// On older Node.js we install a resolve hook that hands the suite an "fs"
// module with a stub globSync; on Node.js >= 22 this file does nothing.
import { register } from 'node:module';

const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  register('./hooks.mjs', import.meta.url);
}
