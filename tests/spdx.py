#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/spdx.py ROOT - every source file says its licence in its first line.

zap is MIT-licensed (LICENSE); each source file carries the line
`SPDX-License-Identifier: MIT` in a comment on its first line, or on its
second after a `#!` line, so that a file copied out of the tree keeps its
licence. The files are git's: tracked, and new ones not ignored. Exempt are
the kinds that are not source, listed in EXEMPT with the reason; any other
kind of file must carry the line, so a new kind of source is checked from its
first file. Exits 1 naming each file without it, 77 (skipped) outside a git
checkout.
"""
import fnmatch
import os
import subprocess
import sys

LINE = "SPDX-License-Identifier: MIT"

# Pattern (on the path from ROOT) -> why the file has no SPDX line.
EXEMPT = {
    "LICENSE": "the licence itself",
    "NOTICE": "the notices of the ported works",
    "*.md": "documentation, not source (the licence covers it; README.md says so)",
    "*.json": "data written by tools (model/mutation's results); JSON has no comments",
    "*.tsv": "measurements (docs/benchmarks)",
    "*.csv": "measurements",
    "*.png": "pictures",
    "*.svg": "pictures",
    "*.patch": "diffs of src/ applied by patch and git apply (model/seed, bench)",
}


def exempt(path):
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(os.path.basename(path), p) for p in EXEMPT)


def has_line(path):
    with open(path, "rb") as f:
        head = f.read(4096).decode("utf-8", "replace").split("\n")
    first = 1 if head and head[0].startswith("#!") else 0
    return len(head) > first and LINE in head[first]


def main(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"SKIPPED: not a git checkout, or no git ({e})")
        return 77
    files = sorted({p for p in out.split("\0") if p and os.path.isfile(os.path.join(root, p))})
    checked = [p for p in files if not exempt(p)]
    missing = [p for p in checked if not has_line(os.path.join(root, p))]
    for p in missing:
        print(f"{p}: no '{LINE}' on its first line (second after #!)")
    print(f"{len(checked)} source files checked ({len(files) - len(checked)} exempt by kind), {len(missing)} without the line")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
