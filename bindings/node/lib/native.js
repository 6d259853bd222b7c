'use strict';
// Loads the native addon (src/addon.cc), from the first of:
//   $SESSIONDB_NODE_ADDON          a build of your own (the repository's tests set it)
//   <package>/native/sessiondb.node  what `npm install` of the folder built (scripts/build-addon.js)
//   <repository>/build/node/sessiondb.node  the repository's own build, when the
//                                    package is used from a checkout
const fs = require('node:fs');
const path = require('node:path');

const packageDir = path.resolve(__dirname, '..');
const candidates = [
  process.env.SESSIONDB_NODE_ADDON,
  path.join(packageDir, 'native', 'sessiondb.node'),
  path.resolve(packageDir, '..', '..', 'build', 'node', 'sessiondb.node'),
].filter(Boolean);

function load() {
  for (const file of candidates) {
    if (fs.existsSync(file)) return require(file);
  }
  throw new Error(
    'sessiondb: the native addon is not built (looked for ' + candidates.join(', ') + '). ' +
      'Run `npm install` in ' + packageDir + ' (it builds the addon with CMake), ' +
      'or build the repository (`make build`) and use the package from the checkout.');
}

module.exports = load();
