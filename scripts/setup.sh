#!/usr/bin/env bash
# Installs the Debian packages sessiondb needs to build, test and benchmark,
# and the browser tests' npm package (tests/web).
# Idempotent: packages already present are left alone, and apt is not touched
# at all when nothing is missing. The README and .ci/run both call this script.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libsqlite3-dev sqlite3          # embedded backend (WAL, FTS5)
  libpq-dev                       # PostgreSQL backend (client library)
  postgresql                      # the throw-away server the PostgreSQL tests start
  libssl-dev                      # SHA-256, base64
  nlohmann-json3-dev              # JSON codec
  libcli11-dev                    # command line parsing
  libzip-dev                      # ChatGPT and Claude.ai export archives (import)
  libcurl4-openssl-dev            # embeddings from an OpenAI-compatible endpoint
  libhnswlib-dev                  # approximate vector index (HNSW)
  libcpp-httplib-dev              # HTTP server (tests' embedding endpoint)
  libgtest-dev libgmock-dev       # tests
  libbenchmark-dev                # bench/
  chromium                        # the web page's tests run in a real browser (tests/web)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
# Node.js and npm (for the browser tests' playwright-core) from Debian, but
# only when the commands are missing: a machine with NodeSource's nodejs has
# npm inside it, and Debian's npm package would conflict with it.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
else
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# playwright-core, pinned by tests/web/package-lock.json. It never downloads a
# browser: the tests drive Debian's /usr/bin/chromium.
WEB_TESTS="$(dirname "$0")/../tests/web"
if [ ! -d "$WEB_TESTS/node_modules" ] || [ "$WEB_TESTS/package-lock.json" -nt "$WEB_TESTS/node_modules" ]; then
  echo "setup: npm ci in tests/web"
  (cd "$WEB_TESTS" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$WEB_TESTS/node_modules"
fi
echo "setup: done"
