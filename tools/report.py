#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The summary of tools/verify and tools/test: one table per kind of check.

    tools/report.py DIR PRESET:LABEL:RC ...

Each PRESET:LABEL:RC names one ctest run (tools/common.sh, zap_ctest) whose
JUnit report is DIR/PRESET.LABEL.xml (ctest --output-junit) and whose exit
code was RC.  The report holds each test's output on its own, so the tables
are read per test and never mix the lines of two tests that ran side by side.

What is read from a test's output (nothing is a list of known tests):
  model*  the model binaries' lines "scheduler: ...", "executions explored:
          N; result: R", "PASS|FAIL: expected E", "ordering override: ...";
          a model test without them (model_mutation_ci) shows its last line.
  tla*    the rows of tla/run.sh's table (config expected result distinct
          depth seconds); a skipped test is a SKIPPED row, never a pass.
  genmc*  model/genmc/run's lines "genmc: FILE TEST, model M, ..., unroll U",
          "executions explored: N; result: R", "blocked: B; seconds: S",
          "PASS|FAIL: expected E", "ordering override: ..."; a skipped test
          (no GenMC) is a SKIPPED row, never a pass.
  unit    per preset (the platforms: default, release, portable, windows,
          arm64, and the sanitizer builds): ctests, and GoogleTest cases
          ("[  PASSED  ] N tests.", "[  SKIPPED ] N tests").
  stress  per preset: ctests, and "zap_stress: passed: N runs in S s; tasks
          executed: T".
  other   per preset: ctests.

Then the ten slowest tests (ctest's wall seconds), where a run's time goes.

Prints the tables, the skipped tests, and last the line CI reads:
"zap: N passed, N failed" (skipped tests are in neither count).  Exit code 1
when a test failed or a ctest run failed without a report, else 0.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass


@dataclass
class Test:
    preset: str
    label: str
    name: str
    status: str  # "passed", "failed" or "skipped"
    seconds: float
    output: str


def read_run(directory, spec):
    """The tests of one ctest run, or None when it left no report."""
    preset, label, _ = spec.split(":")
    path = os.path.join(directory, f"{preset}.{label}.xml")
    if not os.path.exists(path):
        return None
    status_of = {"run": "passed", "notrun": "skipped", "disabled": "skipped"}
    return [Test(preset, label, case.get("name"), status_of.get(case.get("status"), "failed"),
                 float(case.get("time") or 0), case.findtext("system-out") or "")
            for case in ET.parse(path).getroot().iter("testcase")]


def number(text):
    return f"{int(text):,}" if text and text.isdigit() else (text or "-")


def table(title, header, rows, right=()):
    """An aligned table; columns named in `right` are right-aligned."""
    if not rows:
        return
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print(f"\n{title}")
    for r in [header] + rows:
        cells = [str(c).rjust(w) if h in right else str(c).ljust(w) for c, w, h in zip(r, widths, header)]
        print("  " + "  ".join(cells).rstrip())


def verdict(test, claimed=None):
    """The test's verdict: ctest's status, with the test's own word when it disagrees."""
    if test.status == "skipped":
        return "SKIPPED"
    if test.status == "passed":
        return "PASS"
    if claimed == "PASS":
        return "FAIL (ctest: failed after the test printed PASS)"
    return "FAIL" if claimed == "FAIL" else "FAIL (no verdict line: crashed or timed out)"


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def model_row(t):
    """test, scheduler, bound, iterations, explored, result, expected, verdict, note (the overrides)."""
    def line(pattern):
        m = re.search(pattern, t.output, re.M)
        return m.groups() if m else None

    scheduler = line(r"^scheduler: (\w+)([^;\n]*)")  # "context bound scheduler, context bound 2 (preemptions)"
    explored = line(r"^executions explored: (\d+); result: (.*)$") or ("?", "?")
    claim = line(r"^(PASS|FAIL): expected (\S+)") or (None, "?")
    if not scheduler:  # not a model binary (model_mutation_ci): its own last line
        return [t.name, "-", "-", "-", "-", "-", "-", verdict(t), last_line(t.output)]
    kind, detail = scheduler
    bound = re.search(r"context bound (\d+)", detail)
    iterations = re.search(r"(\d+) iterations", detail)
    overrides = re.findall(r"^ordering override: (\S+)", t.output, re.M)
    return [t.name, "bound" if kind == "context" else kind, bound.group(1) if bound else "-",
            number(iterations and iterations.group(1)), number(explored[0]), explored[1].strip(), claim[1],
            verdict(t, claim[0]), ",".join(os.path.basename(o) for o in overrides)]


def genmc_row(t):
    """test, model, unroll, explored, blocked, result, expected, verdict, seconds, note."""
    def line(pattern):
        m = re.search(pattern, t.output, re.M)
        return m.groups() if m else None

    if t.status == "skipped":
        return [t.name, "-", "-", "-", "-", "-", "-", "SKIPPED", f"{t.seconds:.1f}",
                re.sub(r"^SKIPPED: ", "", last_line(t.output))]
    setup = line(r"^genmc: .*, model (\w+), .*unroll (\d+),[^\n]*?(?:, seed (\S+))?$") or ("?", "?", None)
    explored = line(r"^executions explored: (\S+); result: (.*)$") or ("?", "?")
    blocked = line(r"^blocked: (\d+); seconds: ([\d.]+)") or ("?", f"{t.seconds:.1f}")
    claim = line(r"^(PASS|FAIL): expected ([^\s,]+(?:,[^\s,]+)*)") or (None, "?")
    overrides = re.findall(r"^ordering override: (\S+)", t.output, re.M)
    note = ",".join(os.path.basename(o) for o in overrides) + (f" seed {setup[2]}" if setup[2] else "")
    unroll = "none" if setup[1] == "0" else setup[1]
    return [t.name, setup[0], unroll, number(explored[0]), number(blocked[0]), explored[1], claim[1],
            verdict(t, claim[0]), blocked[1], note.strip()]


# A row of tla/run.sh's table: config expected result distinct depth seconds ("?" when TLC printed none).
TLA_ROW = re.compile(r"^(\S+)\s+(\S+)\s+(ok|FAIL)\s+(\d+|\?)\s+(\d+|\?)\s+([\d.]+)$")


def tla_rows(t):
    """One row per configuration in tla/run.sh's table; one row for the test otherwise."""
    if t.status == "skipped":
        return [[t.name, "-", "-", "-", "-", "-", "SKIPPED", re.sub(r"^SKIPPED: ", "", last_line(t.output))]]
    rows = []
    for line in t.output.splitlines():
        m = TLA_ROW.match(line.strip())
        if not m:
            continue
        config, expect, result, distinct, depth, secs = m.groups()
        if result == "ok":
            kind, _, prop = expect.partition(":")
            found = "no error" if expect == "pass" else f"{prop} violated ({kind})"
        else:
            found = "not the expected outcome"
        rows.append([config, expect, found, number(distinct), number(depth), secs,
                     "PASS" if result == "ok" else "FAIL", ""])
    if not rows or (t.status == "failed" and all(r[6] == "PASS" for r in rows)):
        rows.append([t.name, "-", "-", "-", "-", f"{t.seconds:.1f}", verdict(t), last_line(t.output)])
    return rows


def count(tests):
    return {s: sum(t.status == s for t in tests) for s in ("passed", "failed", "skipped")}


def totals_row(name, tests, extra):
    c = count(tests)
    return [name, len(tests), c["passed"], c["failed"], c["skipped"], *extra,
            f"{sum(t.seconds for t in tests):.1f}"]


def gtest_cases(tests):
    def total(pattern):
        return f"{sum(int(n) for t in tests for n in re.findall(pattern, t.output, re.M)):,}"
    return [total(r"^\[  PASSED  \] (\d+) tests?\."), total(r"^\[  FAILED  \] (\d+) tests?,"),
            total(r"^\[  SKIPPED \] (\d+) tests?,")]


def stress_runs(tests):
    found = [re.search(r"^zap_stress: passed: (\d+) runs in [\d.]+ s; tasks executed: (\d+)", t.output, re.M)
             for t in tests]
    return [f"{sum(int(m.group(1)) for m in found if m):,}", f"{sum(int(m.group(2)) for m in found if m):,}"]


def grouped(tests, key):
    groups = {}
    for t in tests:
        groups.setdefault(key(t), []).append(t)
    return groups.items()


COUNTS = ["ctests", "passed", "failed", "skipped"]


def print_tables(tests):
    """Unit, Relacy and GenMC models, TLA+, stress (the order tools/test runs them), then any other label."""
    def labelled(match):
        return [t for t in tests if match(t.label)]

    def totals(title, label, columns, values):
        """One row per preset: the ctest counts, then values(tests) under columns."""
        table(title, ["preset"] + COUNTS + columns + ["seconds"],
              [totals_row(p, ts, values(ts)) for p, ts in grouped(labelled(lambda l: l == label), lambda t: t.preset)],
              right=set(COUNTS + columns) | {"seconds"})

    def is_model(label):  # model, model-teeth, model-deep
        return label.startswith("model")

    def is_tla(label):  # tla, tla-teeth
        return label.startswith("tla")

    totals("Unit tests", "unit", ["cases passed", "cases failed", "cases skipped"], gtest_cases)
    table("Relacy models", ["test", "scheduler", "bound", "iterations", "explored", "result", "expected",
                            "verdict", "note"],
          [model_row(t) for t in labelled(is_model)], right={"bound", "iterations", "explored"})
    table("GenMC models (model/genmc/run)", ["test", "model", "unroll", "explored", "blocked", "result", "expected",
                                             "verdict", "seconds", "note"],
          [genmc_row(t) for t in labelled(lambda l: l.startswith("genmc"))],
          right={"unroll", "explored", "blocked", "seconds"})
    table("TLA+ (tla/run.sh)", ["config", "expected", "TLC found", "states", "depth", "seconds", "verdict",
                                "note"],
          [r for t in labelled(is_tla) for r in tla_rows(t)], right={"states", "depth", "seconds"})
    totals("Stress", "stress", ["runs", "tasks executed"], stress_runs)
    others = labelled(lambda l: not is_model(l) and not is_tla(l) and not l.startswith("genmc")
                      and l not in ("unit", "stress"))
    table("Other labels", ["preset/label"] + COUNTS + ["seconds"],
          [totals_row(f"{p}/{l}", ts, []) for (p, l), ts in grouped(others, lambda t: (t.preset, t.label))],
          right=set(COUNTS) | {"seconds"})
    slowest = sorted(tests, key=lambda t: -t.seconds)[:10]
    table("The slowest tests (wall seconds; two ran at once)", ["preset/test", "label", "seconds"],
          [[f"{t.preset}/{t.name}", t.label, f"{t.seconds:.1f}"] for t in slowest], right={"seconds"})


def main(argv):
    directory, specs = argv[1], argv[2:]
    tests, lost, empty = [], [], []
    for spec in specs:
        run = read_run(directory, spec)
        if run is None:
            if spec.split(":")[2] != "0":
                lost.append(spec)
            continue
        if not run:
            empty.append(spec.rsplit(":", 1)[0].replace(":", "/"))
        tests += run
    print_tables(tests)

    print()
    failed = [t for t in tests if t.status == "failed"]
    for t in failed:
        print(f"FAILED: {t.preset}/{t.name}")
    for spec in lost:
        print(f"FAILED: ctest run {spec} (preset:label:exit code) left no report")
    for run in empty:
        print(f"no tests: {run}")
    for t in tests:
        if t.status == "skipped":
            print(f"skipped: {t.preset}/{t.name}: {last_line(t.output) or 'skipped by ctest'}")
    c = count(tests)
    print(f"zap: {c['passed']} passed, {c['failed'] + len(lost)} failed")
    return 1 if failed or lost else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
