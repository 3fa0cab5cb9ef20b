#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/doc_snippets.py ROOT CXX - the code the documents show is code that builds.

Reads README.md and every docs/*.md of ROOT. A fenced block that looks like
C++ (its language is cpp, c++, cxx or c; or it has no language and holds an
#include or a line ending in ';', '{' or '}') must follow one of these
marks, on the last non-blank line before its fence:

  <!-- example: examples/NAME.cpp -->  the block appears verbatim, as
      consecutive lines, in that example, which its own ctest (example.NAME)
      builds and runs, checking its result;
  <!-- compiles -->  the block is a whole program: CXX compiles it here
      (-std=c++20 -fsyntax-only, -Wall -Wextra -Werror, zap's src/ on the
      include path);
  <!-- fragment -->  the block is not a program (declarations, a piece of
      one, a tour of calls): nothing to build, and the mark says so.

So no block that looks like a program can drift from one that compiles.
Exits 1 naming each block that is unmarked, not found or does not compile,
and when no example block is found at all (the scan itself is broken).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!-- (example: (\S+)|compiles|fragment) -->$")
CXX_LANGUAGES = {"cpp", "c++", "cxx", "c"}


def blocks(lines):
    """(language, mark match or None, block lines, first line number) of each fenced block."""
    i = 0
    while i < len(lines):
        fence = lines[i].strip()
        if not fence.startswith("```"):
            i += 1
            continue
        before = [line.strip() for line in lines[:i] if line.strip()]
        mark = MARK.match(before[-1]) if before else None
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith("```"):
            end += 1
        yield fence[3:].strip().lower(), mark, lines[i + 1:end], i + 2
        i = end + 1


def looks_like_cpp(language, code):
    if language:
        return language in CXX_LANGUAGES
    stripped = [re.sub(r"//.*", "", line).rstrip() for line in code]
    return any("#include" in line for line in code) or any(re.search(r"[;{}]$", line) for line in stripped)


def dedent(code):
    """A block indented inside a list item, as it appears in the source file."""
    indent = min((len(line) - len(line.lstrip()) for line in code if line.strip()), default=0)
    return [line[indent:] for line in code]


def verbatim(code, source):
    n = len(code)
    return any(source[k:k + n] == code for k in range(len(source) - n + 1))


def compiles(code, root, cxx):
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write("\n".join(code) + "\n")
        path = f.name
    try:
        run = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                              "-I" + os.path.join(root, "src"), path], capture_output=True, text=True)
        return run.returncode == 0, run.stderr
    finally:
        os.unlink(path)


def main(root, cxx):
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    failures = examples = compiled = fragments = 0
    for doc in docs:
        name = os.path.relpath(doc, root)
        for language, mark, code, at in blocks(open(doc).read().split("\n")):
            if mark is None:
                if looks_like_cpp(language, code):
                    print(f"{name}:{at}: a C++ block with no mark: <!-- example: ... -->, <!-- compiles --> "
                          "or <!-- fragment --> on the line before its fence")
                    failures += 1
                continue
            if mark.group(2):
                examples += 1
                source = open(os.path.join(root, mark.group(2))).read().split("\n")
                if not verbatim(code, source) and not verbatim(dedent(code), source):
                    print(f"{name}:{at}: this block is not a verbatim excerpt of {mark.group(2)}")
                    failures += 1
            elif mark.group(1) == "compiles":
                compiled += 1
                ok, errors = compiles(dedent(code), root, cxx)
                if not ok:
                    print(f"{name}:{at}: this block does not compile:\n{errors}")
                    failures += 1
            else:
                fragments += 1
    if examples == 0:
        print("no marked example blocks found: the scan is broken")
        return 1
    print(f"{len(docs)} documents: {examples} example excerpts, {compiled} programs compiled, "
          f"{fragments} fragments; {failures} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
