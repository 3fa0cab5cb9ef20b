#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""model/genmc/lower_ir.py IN.ll OUT.ll - rewrites, in clang's LLVM IR of a
GenMC test, two kinds of call that GenMC v0.11's interpreter cannot run, as
plain instructions that compute the same values and touch the same memory
with the same access sizes:

- llvm.umax/umin/smax/smin: clang 19 at -O1 makes them of std::min,
  std::max and any select of that shape, and the interpreter stops on them
  ("Code generator does not support intrinsic function 'llvm.umax.i64'").
  `%r = call iN @llvm.umax.iN(iN %a, iN %b)` becomes
  `%zap.lower.K = icmp ugt iN %a, %b` and `%r = select i1 %zap.lower.K, ...`.
- llvm.memcpy of a struct (a struct copy into memory clang cannot see the
  type of, e.g. a member initialised from a reference): GenMC promotes a
  memcpy to typed loads and stores only when the pointers' types are known,
  which LLVM 19's opaque pointers hide ("Cannot promote intrinsic due to
  opaque operand type pointer"), and then runs it as bytes, which its
  mixed-size check rejects when the fields are read. clang's !tbaa.struct
  metadata lists each field's offset, size and type: each becomes one load
  and one store of that size (a pointer field as `ptr`).

A call of either kind this script cannot parse is left as it is (GenMC then
stops on it, as before). Prints how many calls it rewrote.
"""

import re
import sys

PREDICATE = {"umax": "ugt", "umin": "ult", "smax": "sgt", "smin": "slt"}
MINMAX = re.compile(
    r"^(?P<indent>\s*)(?P<result>%[-\w.$]+) = (?:tail )?call (?:noundef )?(?P<type>i\d+) "
    r"@llvm\.(?P<op>[us]m(?:ax|in))\.i\d+\("
    r"(?P=type) (?:noundef )?(?P<a>[^,()]+), (?P=type) (?:noundef )?(?P<b>[^,()]+)\)(?P<rest>.*)$")
MEMCPY = re.compile(
    r"^(?P<indent>\s*)(?:tail )?call void @llvm\.memcpy\.p0\.p0\.i64\("
    r"ptr [^,]*?(?P<dst>[%@][-\w.$]+), ptr [^,]*?(?P<src>[%@][-\w.$]+), i64 (?P<size>\d+), i1 false\)"
    r"(?P<rest>.*), !tbaa\.struct (?P<fields>![0-9]+)\s*$")
METADATA = re.compile(r"^(![0-9]+) = (?:distinct )?!\{(.*)\}\s*$")


def metadata(lines):
    nodes = {}
    for line in lines:
        m = METADATA.match(line)
        if m:
            nodes[m[1]] = m[2]
    return nodes


def field_type(nodes, tag, size):
    """The IR type of a field of `size` bytes whose TBAA access tag is `tag`."""
    base = re.match(r"(![0-9]+)", nodes.get(tag, ""))
    name = re.match(r'!"([^"]*)"', nodes.get(base[1], "")) if base else None
    if name is None:
        return None
    return "ptr" if "pointer" in name[1] and size == 8 else f"i{size * 8}"


def lower_memcpy(m, nodes, count):
    """The loads and stores of a struct copy, or None."""
    fields = re.findall(r"i64 (\d+), i64 (\d+), (![0-9]+)", nodes.get(m["fields"], ""))
    if not fields or sum(int(s) for _, s, _ in fields) > int(m["size"]):
        return None
    out = []
    dbg = re.search(r"!dbg ![0-9]+", m["rest"])
    tail = f", {dbg[0]}" if dbg else ""
    for i, (offset, size, tag) in enumerate(fields):
        t = field_type(nodes, tag, int(size))
        if t is None:
            return None
        name = f"%zap.lower.{count}.{i}"
        out += [f'{m["indent"]}{name}.s = getelementptr inbounds i8, ptr {m["src"]}, i64 {offset}{tail}\n',
                f'{m["indent"]}{name}.d = getelementptr inbounds i8, ptr {m["dst"]}, i64 {offset}{tail}\n',
                f'{m["indent"]}{name}.v = load {t}, ptr {name}.s, align 1{tail}\n',
                f'{m["indent"]}store {t} {name}.v, ptr {name}.d, align 1{tail}\n']
    return out


def lower(lines):
    nodes = metadata(lines)
    out, count = [], 0
    for line in lines:
        m = MINMAX.match(line)
        if m:
            t, rest, flag = m["type"], m["rest"], f"%zap.lower.{count}"
            out.append(f'{m["indent"]}{flag} = icmp {PREDICATE[m["op"]]} {t} {m["a"]}, {m["b"]}{rest}\n')
            out.append(f'{m["indent"]}{m["result"]} = select i1 {flag}, {t} {m["a"]}, {t} {m["b"]}{rest}\n')
            count += 1
            continue
        m = MEMCPY.match(line)
        copy = lower_memcpy(m, nodes, count) if m else None
        if copy:
            out += copy
            count += 1
            continue
        out.append(line)
    return out, count


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: lower_ir.py IN.ll OUT.ll")
    with open(sys.argv[1]) as f:
        lines, count = lower(f.readlines())
    with open(sys.argv[2], "w") as f:
        f.writelines(lines)
    print(f"lower_ir: {count} min/max or struct-copy calls rewritten")


if __name__ == "__main__":
    main()
