#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A compile-fail test: a program that must NOT compile, and must fail the
way a user should see it fail.

    check.py COMPILER SOURCE INCLUDE_DIR

The source states what is expected, in comments:

    // zap-expect: REGEX      each such regular expression must match the
                              compiler's output (the rule's name, or its words)
    ... // zap-error-here     the lines the compiler's errors must point at:
                              every error is on one of them, and each of them
                              has one (errors at the user's call, never first
                              inside a zap header)
    // zap-first-error-in: SUFFIX
                              instead of the marked lines: the first error is
                              in a file whose path ends with SUFFIX (a #error
                              of zap's own, which is where it belongs)
    // zap-flags: FLAGS       extra compiler flags (-std=c++17, -Werror=...)

Passes (exit 0, printing "zap compile-fail: ok") only when the compiler
rejects the file and every expectation holds; otherwise prints why and the
compiler's output, and exits 1.
"""
import os
import re
import shlex
import subprocess
import sys

ERROR = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: ", re.M)


def expectations(source):
    expects, marked, first_in, flags = [], set(), None, []
    with open(source, encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            if m := re.search(r"//\s*zap-expect:\s*(.+?)\s*$", text):
                expects.append(m.group(1))
            if re.search(r"//.*\bzap-error-here\b", text):
                marked.add(number)
            if m := re.search(r"//\s*zap-first-error-in:\s*(\S+)", text):
                first_in = m.group(1)
            if m := re.search(r"//\s*zap-flags:\s*(.+?)\s*$", text):
                flags += shlex.split(m.group(1))
    return expects, marked, first_in, flags


def main():
    compiler, source, include = sys.argv[1:4]
    source = os.path.realpath(source)
    expects, marked, first_in, flags = expectations(source)
    if not expects or not (marked or first_in):
        print(f"{source}: states no expectation (zap-expect, and zap-error-here or zap-first-error-in)")
        return 1
    std = [] if any(f.startswith("-std=") for f in flags) else ["-std=c++20"]
    command = [compiler, *std, *flags, "-fsyntax-only", "-fdiagnostics-color=never", f"-I{include}", source]
    run = subprocess.run(command, capture_output=True, text=True)
    output = run.stdout + run.stderr
    problems = []
    if run.returncode == 0:
        problems.append("the file compiled")
    errors = [(os.path.realpath(m.group("file")), int(m.group("line"))) for m in ERROR.finditer(output)]
    if run.returncode != 0 and not errors:
        problems.append("the compiler failed without an error line")
    if first_in:
        if errors and not errors[0][0].endswith(first_in):
            problems.append(f"the first error is in {errors[0][0]}, not in a file ending with {first_in}")
    else:
        elsewhere = [e for e in errors if e[0] != source or e[1] not in marked]
        if elsewhere:
            problems.append("errors outside the marked lines of the user's file: "
                            + ", ".join(f"{f}:{n}" for f, n in elsewhere))
        missing = sorted(marked - {n for f, n in errors if f == source})
        if missing:
            problems.append("marked lines without an error: " + ", ".join(map(str, missing)))
    for expect in expects:
        if not re.search(expect, output):
            problems.append(f"the output does not match /{expect}/")
    if problems:
        print(shlex.join(command))
        for problem in problems:
            print("FAILED:", problem)
        print(output)
        return 1
    print("zap compile-fail: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
