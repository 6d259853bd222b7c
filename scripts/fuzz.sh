#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) with the `sanitize`
# preset (clang 14, AddressSanitizer + UndefinedBehaviorSanitizer, in
# build-sanitize/, the build whose tests CI runs too) and runs each target
# for a bounded time or number of runs. Fails (exit 1) when any target
# crashes, leaks, exceeds the per-input time or memory limit, or fails to
# start; the input that did it is saved under build-sanitize/crashes/<target>/
# and the command to replay it is printed.
#
#   scripts/fuzz.sh                        every target, 20 s each
#   scripts/fuzz.sh --total 3600           an hour, shared between the targets
#   scripts/fuzz.sh --seconds 300 json_body mcp_line    five minutes each of two
#   scripts/fuzz.sh --runs 400 --seed 1 import_codex    the same 400 inputs every time
#   scripts/fuzz.sh --list                 the target names
#
# Options: --seconds N (per target), --total N (split evenly; wins over
# --seconds), --runs N (stop after N inputs, whichever comes first),
# --seed N (libFuzzer's random seed; with --runs and a fresh corpus the run
# is the same on every machine, which is what CI uses), --timeout N (seconds
# one input may take, default 10), --rss-mb N (memory limit, default 2048),
# --max-len N (longest input, default 65536), --build-dir DIR (default
# build-sanitize), --no-build.
# What a run learns is kept in <build-dir>/corpus/<target>/ (reused by the
# next run; --fresh-corpus empties it first); the seeds in
# fuzz/corpus/<target>/ are only read.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=20
total=""
runs=-1
seed=0
fresh=0
timeout_s=10
rss_mb=2048
max_len=65536
build_dir=build-sanitize
build=1
list=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --total) total="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --fresh-corpus) fresh=1; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --rss-mb) rss_mb="$2"; shift 2 ;;
    --max-len) max_len="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --list) list=1; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
  cmake --preset sanitize -B "$build_dir" "${launcher[@]}" >/dev/null
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
  [ "$fresh" -eq 1 ] && rm -rf "$work"
  mkdir -p "$work" "$crashes"
  dict=()  # JSON's tokens help every target whose input is JSON
  case "$t" in data_uri|media_type|query_syntax|search_params) ;; *) dict=(-dict=fuzz/dicts/json.dict) ;; esac
  [ -f "fuzz/dicts/$t.dict" ] && dict=(-dict="fuzz/dicts/$t.dict")
  bound="${seconds}s"
  [ "$runs" -ge 0 ] && bound="$runs runs or ${seconds}s"
  echo "== fuzz $t: $bound (seed $seed, timeout ${timeout_s}s per input, ${rss_mb} MB)"
  log="$build_dir/fuzz-$t.log"
  if "$bin" -max_total_time="$seconds" -runs="$runs" -seed="$seed" -timeout="$timeout_s" -rss_limit_mb="$rss_mb" \
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
echo "fuzz.sh: ${#targets[@]} targets ran ($bound each) without a crash"
