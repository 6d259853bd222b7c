#!/usr/bin/env bash
# Installs the Debian packages sessiondb needs. Two modes:
#
#   scripts/setup.sh           the program: the toolchain and the -dev libraries
#                              `sessiondb` is built against (`make serve`,
#                              `make install`, `make deb`);
#   scripts/setup.sh --tests   that and everything the tests, benchmarks, fuzzing
#                              and lint need (PostgreSQL, Chromium, GoogleTest,
#                              clang 14, the Python and Node packages' headers),
#                              then the npm packages of the Node tests (tests/web,
#                              tests/node). `make build`, `make test` and .ci/run
#                              run this one.
#
# Idempotent: packages already present are left alone, apt is not touched at
# all when nothing is missing, and npm only when a node_modules folder is
# missing or older than its package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/setup.sh [--tests]" >&2; }
TESTS=0
for arg in "$@"; do
  case "$arg" in
    --tests) TESTS=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage; exit 2 ;;
  esac
done

# What `cmake` needs to configure and build the program (CMakeLists.txt's
# REQUIRED packages).
PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libsqlite3-dev                  # embedded backend (WAL, FTS5)
  libpq-dev                       # PostgreSQL backend (headers; libpq5 is dlopened on first use)
  libssl-dev                      # SHA-256, base64
  nlohmann-json3-dev              # JSON codec
  libexpected-dev                 # tl::expected, behind Result<T> (clang 14 builds it)
  libcli11-dev                    # command line parsing
  libzip-dev                      # ChatGPT and Claude.ai export archives (import)
  libcurl4-openssl-dev            # embeddings from an OpenAI-compatible endpoint (dlopened too)
  libhnswlib-dev                  # approximate vector index (HNSW)
  libmicrohttpd-dev               # HTTP server (sessiondb serve; dlopened when it starts)
)

if [ "$TESTS" -eq 1 ]; then
  PACKAGES+=(
    sqlite3                         # the sqlite3 shell (docs/formats.md, docs/benchmarks.md)
    postgresql                      # the throw-away server the PostgreSQL tests start
    pgbouncer                       # PgBouncer in transaction mode before the test server (pg_connections_test)
    libcpp-httplib-dev              # HTTP client of the server tests and bench; tests' embedding endpoint
    libgtest-dev libgmock-dev       # tests
    libbenchmark-dev                # bench/
    libxapian-dev                   # bench/xapian: Xapian beside FTS5 (issue 19; the product does not link it)
    clang-14 libclang-rt-14-dev     # fuzz/: libFuzzer, ASan and UBSan runtimes (scripts/fuzz.sh)
    clang-format-14 clang-tidy-14   # scripts/lint.sh: the layout and tidy checks of .ci/run
    chromium                        # the web page's tests run in it (tests/web, playwright-core)
    groff-base man-db zsh fish      # install_test renders the man page, checks the completions
    jq                              # docs/cli.md examples pipe JSON through it (docs_examples_cli_test)
    curl                            # the README walk fetches the page's API (readme_walk_cli_test)
    python3-dev pybind11-dev        # the Python package (python/, docs/python.md)
    python3-pytest python3-pytest-asyncio python3-setuptools python3-wheel  # its tests; pip install . offline
  )
  # Node.js and npm run the browser tests. A machine may already have them from
  # elsewhere (NodeSource's nodejs bundles npm, and Debian's npm conflicts with
  # it), so Debian's packages are added only for a command that is missing.
  command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
  command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
  # The Node package's addon (bindings/node) builds against node_api.h:
  # NodeSource's nodejs ships it in /usr/include/node, Debian's in libnode-dev.
  [ -f /usr/include/node/node_api.h ] || [ -f /usr/local/include/node/node_api.h ] ||
    PACKAGES+=(libnode-dev)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

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

if [ "$TESTS" -eq 0 ]; then
  echo "setup: done (the program's packages; scripts/setup.sh --tests adds the tests')"
  exit 0
fi

# The npm packages of the Node tests, at the versions each package-lock.json
# pins: playwright-core for the web page (it never downloads a browser: the
# tests drive Debian's /usr/bin/chromium), and for tests/node the packages
# the Node package plugs into (@openai/agents, LangGraph.js and its saver
# validation suite, the AI SDK, the MCP SDK, TypeScript).
for NODE_TESTS in tests/web tests/node; do
  if [ ! -d "$NODE_TESTS/node_modules" ] || [ "$NODE_TESTS/package-lock.json" -nt "$NODE_TESTS/node_modules" ]; then
    echo "setup: npm ci in $NODE_TESTS"
    (cd "$NODE_TESTS" && npm ci --no-audit --no-fund --loglevel=error)
    touch "$NODE_TESTS/node_modules"
  fi
done
echo "setup: done"
