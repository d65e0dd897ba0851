#!/usr/bin/env bash
# bench/mutation.sh - the mutation job: plants plausible one-line bugs (bench/mutants/),
# one at a time, in a scratch clone of the committed tree, and reports which ones the
# tests catch. A benchmark, not a CTest: it rebuilds one test target per mutant (about
# half a minute each on 2 cores with a warm ccache).
#
#   bench/mutation.sh                  every mutant in bench/mutants/
#   bench/mutation.sh 03 05            only the mutants whose file names start so
#
# A mutant file (bench/mutants/NN-name.mutant) holds, one per line:
#   # what the bug is (comment lines are free text)
#   file: path/in/the/repo            the file the bug goes into
#   target: cmake_target [...]         what to build (the tests' executables)
#   tests: ctest regex                 the tests that must fail with the bug in place
#   perl: s/.../.../                   a perl -0 substitution (may span lines)
# A mutant that does not change its file is reported NOAPPLY (the code moved: fix the
# mutant), and one whose build fails counts as killed, marked "by the compiler" (a
# mutant should compile: one that only trips -Werror measures the warnings, not the tests).
#
# Before any mutant, the unmutated clone builds every target and passes every regex:
# a test that fails without a bug would kill everything and mean nothing.
# Exit status: 0 when every mutant applied and was killed, 1 otherwise, 2 on setup errors.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

# Under the parent of the source tree, with the preset's build directory below the
# source: ccache (base_dir) then sees the same relative paths and reuses our objects.
scratch=$(mktemp -d "${TMPDIR:-$(dirname "$repo")}/softndk-mutation-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
src=$scratch/src
build=$src/build/default
git clone -q "$repo" "$src" || exit 2
(cd "$src" && cmake --preset default -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null) || { echo "configure failed" >&2; exit 2; }

field() { sed -n "s/^$1: //p" "$2"; }

mutants=()
for m in bench/mutants/*.mutant; do
  name=$(basename "$m")
  if [ $# -gt 0 ]; then
    wanted=0
    for prefix in "$@"; do [[ $name == "$prefix"* ]] && wanted=1; done
    [ $wanted = 1 ] || continue
  fi
  mutants+=("$m")
done
[ ${#mutants[@]} -gt 0 ] || { echo "no mutant selected" >&2; exit 2; }

run_tests() {  # regex -> 0 when every selected test passed
  ctest --test-dir "$build" -R "$1" --timeout 60 --no-tests=error >/dev/null 2>&1
}

# Baseline: every target builds and every regex passes without a bug.
for m in "${mutants[@]}"; do
  read -ra targets <<<"$(field target "$m")"
  if ! nice cmake --build "$build" --target "${targets[@]}" >"$scratch/build.log" 2>&1; then
    echo "baseline: ${targets[*]} does not build:" >&2
    tail -20 "$scratch/build.log" >&2
    exit 2
  fi
  if ! run_tests "$(field tests "$m")"; then
    echo "baseline: '$(field tests "$m")' fails without a mutant ($m)" >&2
    exit 2
  fi
done

killed=0 total=0 all=0
printf "%-32s %-8s %s\n" mutant result "what"
for m in "${mutants[@]}"; do
  name=$(basename "$m" .mutant)
  file=$(field file "$m")
  expr=$(field perl "$m")
  regex=$(field tests "$m")
  what=$(sed -n '1s/^# //p' "$m")
  read -ra targets <<<"$(field target "$m")"
  all=$((all + 1))
  (cd "$src" && git checkout -q -- . && perl -0 -pi -e "$expr" "$file")
  if (cd "$src" && git diff --quiet -- "$file"); then
    printf "%-32s %-8s %s\n" "$name" NOAPPLY "$what"
    continue
  fi
  total=$((total + 1))
  start=$(date +%s)
  note=""
  if ! nice cmake --build "$build" --target "${targets[@]}" >/dev/null 2>&1; then
    result=KILLED note=", by the compiler"  # it does not even compile (-Werror included)
  elif run_tests "$regex"; then
    result=SURVIVED
  else
    result=KILLED
  fi
  [ "$result" = KILLED ] && killed=$((killed + 1))
  printf "%-32s %-8s %s (%ss%s)\n" "$name" "$result" "$what" $(($(date +%s) - start)) "$note"
done
(cd "$src" && git checkout -q -- .)
echo "score: $killed of $total mutants killed ($((all - total)) did not apply)"
[ "$killed" = "$all" ]
