#!/usr/bin/env bash
# The benchmark stage of CI (issue 40): W1, W3, W5 and the batched append,
# each beside its floor measured in the same round, three rounds, and a
# failure when the median of a ratio falls past its bound (bench/rounds.cc
# holds the bounds and why each is where it is). Ratios only: a slow or a
# fast disk moves the engine and its floor together. About a minute.
#
#   scripts/bench_regress.sh [--build-dir DIR] [--rounds N]
#
# The figures of every round and their medians are kept in
# <build-dir>/bench-regress.jsonl (one JSON object per line); the stores are
# written to a temporary folder on the same disk as /tmp, removed after.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_regress.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

bench="$build_dir/bench/sessiondb_bench"
if [ ! -x "$bench" ]; then
  echo "bench_regress.sh: $bench is not built; run 'make build' first" >&2
  exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/sessiondb-bench-regress.XXXXXX")
trap 'rm -rf "$work"' EXIT

out="$build_dir/bench-regress.jsonl"
status=0
"$bench" --regress --rounds "$rounds" --dir "$work" > "$out" || status=$?
# The medians and ranges, one line per figure.
python3 - "$out" <<'PY' || true
import json, sys
rounds = [json.loads(l) for l in open(sys.argv[1]) if '"workload":"rounds"' in l]
if rounds:
    r = rounds[-1]
    load = r.get('load_1m', {})
    if isinstance(load, dict) and 'median' in load:
        load = f"{load['median']:.2f} ({load['min']:.2f}-{load['max']:.2f})"
    print(f"bench: {r['rounds']} rounds, load {load}")
    for key in sorted(k for k, v in r.items() if isinstance(v, dict) and k != 'load_1m'):
        v = r[key]
        target = f", target {v['target']} met in {v['met_rounds']}/{r['rounds']}" if 'target' in v else ""
        print(f"  {key}: median {v['median']:.3g} ({v['min']:.3g}-{v['max']:.3g}){target}")
PY
exit "$status"
