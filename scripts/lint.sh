#!/usr/bin/env bash
# The two checks of how the code reads, run by .ci/run (issue 33, item 19):
#
#   scripts/lint.sh format              clang-format 14 over every tracked .cc
#                                       and .h: fails on the first file whose
#                                       layout is not .clang-format's
#   scripts/lint.sh tidy [FILE...]      clang-tidy 14 with the checks .clang-tidy
#                                       names, every warning an error, over the
#                                       given src/ files or, with none, every
#                                       src/**/*.cc (headers through them)
#   scripts/lint.sh tidy --changed REF  only the src/ .cc files changed since REF
#
# tidy reads the compile commands of a clang build (the sanitize preset's,
# build-sanitize/, unless --build-dir DIR says another), so that the flags it
# sees are clang's own. A file the build compiles in a unity batch (CMake's
# UNITY_BUILD: CMakeFiles/<target>.dir/Unity/unity_N_cxx.cxx) is checked
# through that batch, as the compiler sees it; what tidy says of it is still
# said of the file and its line. `make format` rewrites the files in place.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

[ $# -ge 1 ] || usage
mode="$1"
shift

case "$mode" in
  format)
    mapfile -t files < <(git ls-files '*.cc' '*.h')
    clang-format-14 --dry-run -Werror "${files[@]}"
    echo "lint: ${#files[@]} files formatted as .clang-format says"
    ;;
  tidy)
    build_dir=build-sanitize
    files=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --build-dir) build_dir="$2"; shift 2 ;;
        --changed)
          mapfile -t files < <(git diff --name-only --diff-filter=d "$2" -- 'src/*.cc')
          [ ${#files[@]} -gt 0 ] || { echo "lint: no src/ file changed since $2"; exit 0; }
          shift 2 ;;
        -h|--help) usage ;;
        *) files+=("$1"); shift ;;
      esac
    done
    if [ ! -f "$build_dir/compile_commands.json" ]; then
      echo "lint: $build_dir/compile_commands.json is missing: configure that build first" \
           "(cmake --preset sanitize)" >&2
      exit 2
    fi
    [ ${#files[@]} -gt 0 ] || mapfile -t files < <(git ls-files 'src/*.cc')
    # The translation units that hold those files: each file itself, or the
    # unity batch that includes it.
    mapfile -t units < <(python3 - "$build_dir" "${files[@]}" <<'EOF'
import json, os, re, sys
build, files = sys.argv[1], sys.argv[2:]
db = json.load(open(os.path.join(build, "compile_commands.json")))
alone = {os.path.realpath(e["file"]) for e in db}
batch_of = {}
for e in db:
    if "/Unity/unity_" in e["file"]:
        for line in open(e["file"]):
            m = re.match(r'#include "(.*)"', line.strip())
            if m:
                batch_of[os.path.realpath(m.group(1))] = e["file"]
units = []
for f in files:
    path = os.path.realpath(f)
    unit = path if path in alone else batch_of.get(path)
    if unit is None:
        sys.exit(f"lint: {f} is in no compile command of {build}: reconfigure it")
    if unit not in units:
        units.append(unit)
print("\n".join(units))
EOF
)
    # A unity batch is nothing but #include lines of .cc files, which
    # bugprone-suspicious-include would flag: the check is off for the
    # batches and done here instead, over every file of src/ and include/.
    if grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^">]*\.(c|cc|cpp|cxx)[">]' \
         src include; then
      echo "lint: a source file includes a .cc file (above): include its header" >&2
      exit 1
    fi
    # Each unit on its own, two at a time; every warning fails the run
    # (WarningsAsErrors), and what it said is printed whole.
    printf '%s\n' "${units[@]}" |
      xargs -P "$(nproc)" -n 1 clang-tidy-14 -p "$build_dir" --quiet --warnings-as-errors='*' \
        --checks=-bugprone-suspicious-include
    echo "lint: clang-tidy found nothing in ${#files[@]} files (${#units[@]} translation units)"
    ;;
  *) usage ;;
esac
