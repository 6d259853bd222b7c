#!/usr/bin/env bash
# Installs the Debian packages sessiondb needs to build, test and benchmark.
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
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
