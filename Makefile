# The commands a newcomer types. Everything goes through CMake + Ninja in build/.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: setup setup-tests program build install deb test test-quick serve demo bench bench-server bench-pg bench-harness bench-search format clean

# The Debian packages the program needs (toolchain and -dev libraries).
setup:
	bash scripts/setup.sh

# And those of the tests, benchmarks, fuzzing and lint (PostgreSQL, Chromium,
# GoogleTest, clang 14, ...) with the Node tests' npm packages.
setup-tests:
	bash scripts/setup.sh --tests

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo

# The program alone, build/sessiondb: what `make serve` and `make demo` run.
program: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target sessiondb_cli

# Everything: the program, the Python and Node packages, every test, benchmark
# and fuzz replay. The configure step runs again each time (under a second), so
# a tree first configured by `make serve`, without the tests' packages, gets
# its tests once `setup-tests` has installed them.
build: setup-tests $(BUILD)/build.ninja
	cmake -S . -B $(BUILD) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# The program, its man page, shell completions and docs under PREFIX
# (default ~/.local for a user, /usr/local for root): bin/sessiondb,
# share/man/man1/sessiondb.1, share/{bash-completion,zsh,fish}/..., share/doc/sessiondb/.
PREFIX ?= $(if $(filter 0,$(shell id -u)),/usr/local,$(HOME)/.local)

# The program, the Python extension and the Node addon are stripped (their
# debug information is most of their size). The Python package goes where
# python3 looks under PREFIX (the user site under ~/.local, dist-packages
# under /usr/local), the Node package to PREFIX/lib/node_modules/sessiondb,
# each when it can be built (pybind11-dev and python3-dev, the Node headers:
# `scripts/setup.sh --tests` installs them).
install: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target sessiondb_cli \
	  $$(cmake --build $(BUILD) --target help | sed -n 's/^\(_sessiondb\|sessiondb_node\): .*/\1/p')
	cmake --install $(BUILD) --prefix $(PREFIX) --strip

# The same files as a Debian package, under /usr: $(BUILD)/sessiondb_*.deb.
deb: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target sessiondb_cli
	cd $(BUILD) && cpack -G DEB

# All tests: the quick tier and the slow crash/concurrency tier. `build`
# installs what they need first (setup-tests).
test: build
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j $(JOBS)

test-quick: build
	cd $(BUILD) && ctest --output-on-failure --no-tests=error -j $(JOBS) -L quick

# The main job: the server on the default store, with a demo history the
# first time, and the web history browser at the address it prints. Only the
# program is built (not the tests, benchmarks or packages).
serve: program
	$(BUILD)/sessiondb serve --demo

# Stores a conversation with an image in a throw-away store and shows it back.
demo: program
	bash scripts/demo.sh $(BUILD)/sessiondb

bench: build
	$(BUILD)/bench/sessiondb_bench --dir $(BUILD)/bench-data

# The PostgreSQL backend against the embedded store (starts its own server).
bench-pg: build
	$(BUILD)/bench/sessiondb_pg_bench --dir $(BUILD)/bench-data-pg

# Forks, projections and resume (the agent harness).
bench-harness: build
	$(BUILD)/bench/sessiondb_harness_bench --dir $(BUILD)/bench-data-harness

# Durable appends over HTTP by 1 and 64 clients; a list page and searches.
bench-server: build
	$(BUILD)/bench/sessiondb_server_bench --dir $(BUILD)/bench-data-server

# Search on 1,000,000 messages and the hook on 100,000 code writes (~20 min).
bench-search: build
	$(BUILD)/bench/sessiondb_search_bench --dir $(BUILD)/bench-data-search

# W1-W6 from Node: the package beside the Agents SDK's MemorySession and LangGraph's
# SqliteSaver, and the engine's own figures, in one run (bench/node; `npm ci` there once).
.PHONY: bench-node
bench-node: build
	test -d bench/node/node_modules || (cd bench/node && npm ci --no-audit --no-fund)
	SESSIONDB_NODE_ADDON=$(abspath $(BUILD))/node/sessiondb.node node bench/node/bench_node.mjs \
	  --dir $(BUILD)/bench-data-node --native-bench $(BUILD)/bench/sessiondb_bench

format:
	clang-format-14 -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD)
