#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/doc_snippets.py DOC... - the code a document shows is code that runs.

A fenced C++ block that follows the line `<!-- example: examples/NAME.cpp -->`
must appear verbatim, as consecutive lines, in that file; the example itself
is built and run by its ctest (example.NAME), which checks its own result.
So a snippet cannot drift from a program that compiles and passes. Exits 1
naming each block that is not found, and when a document has no such block.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARK = re.compile(r"^<!-- example: (\S+) -->$")


def blocks(lines):
    """(example path, block lines, line number) for every marked block."""
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i].strip())
        i += 1
        if not m:
            continue
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        yield m.group(1), lines[start:end], start + 1
        i = end + 1


def main(docs):
    failures = checked = 0
    for doc in docs:
        lines = open(doc).read().split("\n")
        for example, code, at in blocks(lines):
            checked += 1
            source = open(os.path.join(ROOT, example)).read().split("\n")
            n = len(code)
            if not any(source[k:k + n] == code for k in range(len(source) - n + 1)):
                print(f"{doc}:{at}: this block is not a verbatim excerpt of {example}")
                failures += 1
    if checked == 0:
        print("no marked example blocks found in", " ".join(docs))
        return 1
    print(f"{checked} example blocks checked, {failures} not found")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
