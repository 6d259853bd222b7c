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
# sees are clang's own. `make format` rewrites the files in place.
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
    # Each file on its own, two at a time; every warning fails the run
    # (WarningsAsErrors), and what it said is printed whole.
    printf '%s\n' "${files[@]}" |
      xargs -P "$(nproc)" -n 1 clang-tidy-14 -p "$build_dir" --quiet --warnings-as-errors='*'
    echo "lint: clang-tidy found nothing in ${#files[@]} files"
    ;;
  *) usage ;;
esac
