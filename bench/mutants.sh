#!/usr/bin/env bash
# bench/mutants.sh - a mutation job: plants plausible one-line bugs, one at a time,
# in a scratch clone, and reports which ones the test suite catches. A benchmark,
# not a CI test (it builds once per mutant; ~1 minute each on 2 cores).
#
#   bench/mutants.sh              every mutant below
#   bench/mutants.sh 3 5          only mutants 3 and 5
#
# Each mutant: a file, a perl substitution that must change that file, the test
# target to build and a ctest regex that must fail with the bug in place.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

MUTANTS=(
  # file @@ perl substitution (run with -0: may span lines) @@ build target @@ ctest regex
  'emulator/memory/mpt.cpp@@s/\(required_access & ~granted\) != 0/(required_access & granted) == 0/@@mpt_tests@@^mpt\.'
  'emulator/rc/requester.cpp@@s/r\.outstanding_reads >= qp\.path\.ord/r.outstanding_reads > qp.path.ord/@@emu_rc_tests@@^emu\.rc\.'
  'provider/qp.cpp@@s/kRdmaRead \? info\.MaxReadRequestSge :/kRdmaRead ? limits_.initiator_sge :/@@provider_tests@@^provider:NdkRead'
  'provider/cq.cpp@@s/if \(previous == NDK_CQ_NOTIFY_ANY \|\| merged == NDK_CQ_NOTIFY_ANY\)/if (previous == NDK_CQ_NOTIFY_ANY)/@@provider_tests@@^provider:NdkArmCq'
  'emulator/rc/completer.cpp@@s/(requester_progress\(qp\);)\n    \/\/ Progress may have run.*?complete_in_order\(qp\);\n/$1\n/s@@provider_tests@@^provider:READ_FENCE'
  'emulator/rc/responder.cpp@@s/if \(busy\.size\(\) >= qp\.path\.ird\)/if (busy.size() > qp.path.ird)/@@emu_rc_tests@@^emu\.rc\.'
  'emulator/time/timeline.cpp@@s/b\.start - start >= occupancy/b.start - start > occupancy/@@time_tests@@^time\.'
  'emulator/time/model.cpp@@s/units\[qp % units\.size\(\)\]/units[0]/@@time_tests@@^time\.'
)

selected=("$@")
# Under the source tree's parent by default, so ccache (base_dir) reuses the main build's objects.
scratch=$(mktemp -d "${TMPDIR:-$(dirname "$repo")}/softndk-mutants-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
git clone -q "$repo" "$scratch/src"
cmake -S "$scratch/src" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null ||
  { echo "configure failed" >&2; exit 2; }

killed=0 total=0
printf "%-3s %-8s %-28s %s\n" "#" result file mutant
for i in "${!MUTANTS[@]}"; do
  n=$((i + 1))
  if [ ${#selected[@]} -gt 0 ] && [[ ! " ${selected[*]} " == *" $n "* ]]; then continue; fi
  m=${MUTANTS[$i]}
  file=${m%%@@*}; m=${m#*@@}
  expr=${m%%@@*}; m=${m#*@@}
  target=${m%%@@*}; regex=${m#*@@}
  (cd "$scratch/src" && git checkout -q -- . && perl -0 -pi -e "$expr" "$file")
  if (cd "$scratch/src" && git diff --quiet -- "$file"); then
    printf "%-3s %-8s %-28s %s\n" "$n" "NOAPPLY" "$file" "$expr"
    continue
  fi
  total=$((total + 1))
  if ! cmake --build "$scratch/build" --target "$target" >/dev/null 2>&1; then
    result=KILLED  # it does not even compile
  elif ctest --test-dir "$scratch/build" -R "$regex" --timeout 60 >/dev/null 2>&1; then
    result=SURVIVED
  else
    result=KILLED
  fi
  [ "$result" = KILLED ] && killed=$((killed + 1))
  printf "%-3s %-8s %-28s %s\n" "$n" "$result" "$file" "$expr"
done
(cd "$scratch/src" && git checkout -q -- .)
echo "score: $killed of $total mutants killed"
