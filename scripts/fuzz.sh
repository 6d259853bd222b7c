#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) with clang 14 under
# AddressSanitizer + UndefinedBehaviorSanitizer into build-fuzz/ and runs
# each for a bounded time. Fails (exit 1) when any target crashes, leaks,
# exceeds the per-input time or memory limit, or fails to start; the input
# that did it is saved under build-fuzz/crashes/<target>/ and the command to
# replay it is printed.
#
#   scripts/fuzz.sh                        every target, 20 s each (CI)
#   scripts/fuzz.sh --total 3600           an hour, shared between the targets
#   scripts/fuzz.sh --seconds 300 json_body mcp_line    five minutes each of two
#   scripts/fuzz.sh --list                 the target names
#
# Options: --seconds N (per target), --total N (split evenly; wins over
# --seconds), --timeout N (seconds one input may take, default 10),
# --rss-mb N (memory limit, default 2048), --max-len N (longest input,
# default 65536), --build-dir DIR (default build-fuzz), --no-build.
# What a run learns is kept in build-fuzz/corpus/<target>/ (reused by the
# next run); the seeds in fuzz/corpus/<target>/ are only read.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
total=""
timeout_s=10
rss_mb=2048
max_len=65536
build_dir=build-fuzz
build=1
list=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --total) total="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --rss-mb) rss_mb="$2"; shift 2 ;;
    --max-len) max_len="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done

if [ ${#targets[@]} -eq 0 ]; then
  for dir in fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi
if [ "$list" -eq 1 ]; then printf '%s\n' "${targets[@]}"; exit 0; fi
if [ -n "$total" ]; then
  seconds=$(( total / ${#targets[@]} ))
  [ "$seconds" -ge 1 ] || seconds=1
fi

if [ "$build" -eq 1 ]; then
  command -v clang++-14 >/dev/null || { echo "fuzz.sh: clang++-14 is missing (scripts/setup.sh installs it)" >&2; exit 2; }
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Debug keeps assert() on; -O1 and line tables only keep the build short
  # and stack traces readable.
  CXX=clang++-14 cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" -DSESSIONDB_BUILD_FUZZ=ON -DSESSIONDB_BUILD_TESTS=OFF -DSESSIONDB_BUILD_BENCH=OFF \
    "${launcher[@]}" >/dev/null
  cmake --build "$build_dir" -j "$(nproc)" --target fuzz_all
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_stack_use_after_return=0:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for t in "${targets[@]}"; do
  bin="$build_dir/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "fuzz.sh: no target $t ($bin)" >&2; failed+=("$t"); continue; }
  work="$build_dir/corpus/$t"
  crashes="$build_dir/crashes/$t"
  mkdir -p "$work" "$crashes"
  dict=()  # JSON's tokens help every target whose input is JSON
  case "$t" in data_uri|media_type|query_syntax|search_params) ;; *) dict=(-dict=fuzz/dicts/json.dict) ;; esac
  [ -f "fuzz/dicts/$t.dict" ] && dict=(-dict="fuzz/dicts/$t.dict")
  echo "== fuzz $t: ${seconds}s (timeout ${timeout_s}s per input, ${rss_mb} MB)"
  log="$build_dir/fuzz-$t.log"
  if "$bin" -max_total_time="$seconds" -timeout="$timeout_s" -rss_limit_mb="$rss_mb" \
      -malloc_limit_mb="$rss_mb" -max_len="$max_len" -print_final_stats=1 \
      -artifact_prefix="$crashes/" "${dict[@]}" "$work" "fuzz/corpus/$t" >"$log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' "$log" | tr '\n' ' '
    echo
  else
    failed+=("$t")
    tail -n 60 "$log"
    echo "fuzz.sh: $t FAILED; full log $log; input(s) kept in $crashes/:"
    ls -1 "$crashes"
    echo "  replay: $bin $crashes/<file>   keep it: cp $crashes/<file> fuzz/regressions/$t/"
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failures in: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets ran ${seconds}s each without a crash"
