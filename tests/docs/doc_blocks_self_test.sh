#!/bin/sh
# doc_blocks_self_test.sh BUILD_DIR
# The doc-block test (doc_blocks_test.py) on fixtures/: passing.md passes with one skip
# listed with its reason; in failing.md every block fails (set -e, pipefail, an INI
# load error); an unnamed INI block and a skip without a reason are usage errors (2);
# --check-links finds the three bad references of outside-links.md and none in passing.md.
here=$(cd "$(dirname "$0")" && pwd)
build=$1
test_py=$here/doc_blocks_test.py
fixtures=$here/fixtures
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

out=$(python3 "$test_py" --source-dir "$fixtures" --build-dir "$build" passing.md 2>&1)
rc=$?
[ "$rc" -eq 0 ] || fail "passing.md exited $rc: $out"
echo "$out" | grep -q '^4 blocks passed, 0 failed, 1 skipped' || fail "passing.md counts: $out"
echo "$out" | grep -q "skipped passing.md:.*the fixture's skip" || fail "the skip is not listed"

out=$(python3 "$test_py" --source-dir "$fixtures" --build-dir "$build" failing.md 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "failing.md exited $rc, not 1"
echo "$out" | grep -q '^0 blocks passed, 3 failed' || fail "failing.md counts: $out"
echo "$out" | grep -q "broken.ini:3: \[adapter rnic0\] if_index: 'x' is not a number" ||
  fail "the INI load error is not shown: $out"

for doc in unnamed-ini.md skip-without-reason.md; do
  out=$(python3 "$test_py" --source-dir "$fixtures" --build-dir "$build" "$doc" 2>&1)
  rc=$?
  [ "$rc" -eq 2 ] || fail "$doc exited $rc, not 2: $out"
done
out=$(python3 "$test_py" --source-dir "$fixtures" --check-links outside-links.md passing.md)
rc=$?
[ "$rc" -eq 1 ] || fail "--check-links exited $rc, not 1: $out"
echo "$out" | grep -q '^2 documents, 3 problems$' || fail "--check-links found: $out"
[ "$status" -eq 0 ] && echo "doc_blocks_self_test: passed"
exit "$status"
