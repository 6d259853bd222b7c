#!/usr/bin/env node
'use strict';
// Builds the native addon (sessiondb.node) from this repository and copies it
// to <package>/native/, where lib/native.js loads it. npm runs it as the
// package's `prepare` script, in this folder, on `npm install` of the folder
// (linked or, with --install-links, packed and copied); nothing is downloaded:
// CMake builds against the Node headers on this machine (docs/node.md).
//
//   node scripts/build-addon.js          build (or reuse) and copy
//
// (No `install` script checks for the addon: npm runs `install` before
// `prepare` in the package's own folder. lib/native.js says what to do when
// the addon is missing.)
//
// Where it builds, the first that applies:
//   $SESSIONDB_BUILD_DIR         a configured build tree of this repository
//   <repository>/build           the tree `make build` made, when it is configured
//   <package>/.build             a tree of its own (Release, library and addon
//                                only): the first build takes a few minutes
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const packageDir = path.resolve(__dirname, '..');
const repoRoot = path.resolve(packageDir, '..', '..');
const target = path.join(packageDir, 'native', 'sessiondb.node');

function say(message) { process.stderr.write(`sessiondb: ${message}\n`); }

function run(command, args) {
  say(`${command} ${args.join(' ')}`);
  const r = spawnSync(command, args, { stdio: 'inherit' });
  if (r.error) {
    say(`could not run ${command}: ${r.error.message}. Install CMake and a C++ compiler ` +
        '(scripts/setup.sh in the repository installs everything).');
    process.exit(1);
  }
  if (r.status !== 0) {
    say(`${command} failed (exit ${r.status}); the output above says why.`);
    process.exit(r.status || 1);
  }
}

function configured(dir) { return fs.existsSync(path.join(dir, 'CMakeCache.txt')); }

function buildDir() {
  if (process.env.SESSIONDB_BUILD_DIR) return { dir: process.env.SESSIONDB_BUILD_DIR, fresh: false };
  const repoBuild = path.join(repoRoot, 'build');
  if (configured(repoBuild)) return { dir: repoBuild, fresh: false };
  return { dir: path.join(packageDir, '.build'), fresh: !configured(path.join(packageDir, '.build')) };
}

function main() {
  if (!fs.existsSync(path.join(repoRoot, 'CMakeLists.txt'))) {
    say(`no sessiondb source tree at ${repoRoot}: install the package from the repository's ` +
        'bindings/node folder, where the engine\'s sources are');
    process.exit(1);
  }
  const { dir, fresh } = buildDir();
  if (fresh) {
    say(`configuring a build of the library and the addon in ${dir} (once; a few minutes)`);
    run('cmake', ['-S', repoRoot, '-B', dir, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release',
                  '-DSESSIONDB_BUILD_TESTS=OFF', '-DSESSIONDB_BUILD_BENCH=OFF',
                  '-DSESSIONDB_BUILD_PYTHON=OFF', '-DSESSIONDB_BUILD_NODE=ON']);
  }
  run('cmake', ['--build', dir, '--target', 'sessiondb_node']);
  const built = path.join(dir, 'node', 'sessiondb.node');
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // Copied to a temporary name and renamed, so a running process never loads half a file.
  fs.copyFileSync(built, `${target}.tmp`);
  fs.renameSync(`${target}.tmp`, target);
  say(`addon ready: ${target}`);
}

main();
