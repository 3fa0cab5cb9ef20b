#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/report/check.sh ROOT - tools/report.py never counts a skipped test as
# passed: a JUnit report of one passed and one skipped ctest must end with
# "zap: 1 passed, 0 failed" and list the skipped one.
set -euo pipefail
root=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/default.unit.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++" tests="2" failures="0" skipped="1">
  <testcase name="unit.ran" classname="unit.ran" time="0.1" status="run"><system-out>[  PASSED  ] 3 tests.</system-out></testcase>
  <testcase name="unit.needs_a_tool" classname="unit.needs_a_tool" time="0.0" status="notrun"><skipped message="Skipped"/><system-out>SKIPPED: the tool is not installed</system-out></testcase>
</testsuite>
XML
out=$(python3 "$root/tools/report.py" "$dir" default:unit:0)
echo "$out"
grep -q "^zap: 1 passed, 0 failed$" <<<"$out" || { echo "FAILED: the skipped test changed the counts"; exit 1; }
grep -q "unit.needs_a_tool" <<<"$out" || { echo "FAILED: the skipped test is not listed"; exit 1; }
echo "zap report: ok"
