# SPDX-License-Identifier: MIT
"""The logic mutants of src/zap/ and the schemata tree that holds them all.

Mutants are found by parsing (cxxparse.py), never listed by hand. Each has
an id that names what it changes, not where the line is, so that an edit
elsewhere in the file leaves it alone:

    FILE:FUNCTION:OPERATOR:TEXT#N

FILE the header, FUNCTION its class and function (`BasicThreadPool::join`),
OPERATOR below, TEXT the tokens it changes joined by single spaces, N the
occurrence of that (FILE, FUNCTION, OPERATOR, TEXT) in the file, counted
from 1. The short form `m` + 8 hex digits (a hash of the long id) is what
ZAP_MUTANT takes and docs/mutants.md lists.

Operators:
  delete-call    an expression statement that calls something (a notify, a
                 wake, a push, a done(), a release ...) is not executed
  delete-assign  an expression statement that assigns without a call
  delete-if      an if statement (with its else) is not executed: one
                 source of a search, one step of a protocol
  negate         the condition of an if, while, for or do is negated
  drop-or        one operand of a `||` chain that calls something is false:
                 a search or a drain forgets one source
  drop-and       one operand of a `&&` chain is true: a guard is dropped
  boundary       `<` <-> `<=`, `>` <-> `>=`
  plus-one       an integer literal n becomes n + 1
  minus-one      an integer literal n > 0 becomes n - 1
  break          a loop leaves after its first pass (a `break` at the end
                 of its body and before each of its `continue`s)
  swap           two adjacent expression statements run in the other order

Seeds (model/seed/*.patch) join the same tree: each patch is applied to a
copy of its header, and every changed place is widened to whole statements
of one block, so that `if (seed) { patched } else { original }` compiles
(see seed_regions). Their ids are `seed:NAME`.

Not mutated: constexpr functions (a run-time switch cannot be evaluated at
compile time), code between #if and #endif (a platform may not compile
it), ZAP_ASSERT statements and static_asserts (deleting a check only makes
the checks weaker), and `if constexpr`.
"""

import difflib
import hashlib
import os
import re
import subprocess
import tempfile

import cxxparse

OPERATORS = ("delete-call", "delete-assign", "delete-if", "negate", "drop-or", "drop-and", "boundary",
             "plus-one", "minus-one", "break", "swap")
ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
CMP_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
SKIP_HEADERS = ("zap.hpp",)  # includes only


def short_id(long_id):
    return "m" + hashlib.sha1(long_id.encode()).hexdigest()[:8]


class Edit:
    """A rewrite of text[start:end]: fn(inner) gives the new text, where inner
    is the range's text with the edits nested in it applied."""

    def __init__(self, start, end, fn, mutant):
        self.start, self.end, self.fn, self.mutant = start, end, fn, mutant


class Mutant:
    def __init__(self, file, function, op, text, line, detail=""):
        self.file, self.function, self.op, self.text, self.line = file, function, op, text, line
        self.detail = detail
        self.id = None
        self.short = None
        self.index = None  # number in the schemata tree
        self.edits = []

    def as_dict(self):
        return {"id": self.id, "short": self.short, "file": self.file, "function": self.function,
                "op": self.op, "text": self.text, "line": self.line, "detail": self.detail}


# ---- finding the mutants ----------------------------------------------------------

class FileMutants:
    def __init__(self, name, text):
        self.name = name
        self.src = cxxparse.Source(text)
        self.mutants = []

    # the switch, as the schemata tree spells it
    @staticmethod
    def on(m):
        return f"ZAP_MUTANT_ON({m.index})"

    def add(self, func, op, a, b, edits_fn, detail=""):
        src = self.src
        m = Mutant(self.name, func.name, op, src.norm(a, b), src.toks[a].line, detail)
        m.edits_fn = edits_fn
        self.mutants.append(m)
        return m

    def find(self):
        for f in self.src.functions:
            if f.is_constexpr or f.body is None or self.src.toks[f.open].pp:
                continue
            self._walk_block(f, f.body)
        return self.mutants

    # Statements ----------------------------------------------------------------
    def _walk_block(self, func, block):
        stmts = block.stmts
        for s in stmts:
            self._walk_stmt(func, s)
        # swap: adjacent expression statements
        for s1, s2 in zip(stmts, stmts[1:]):
            if self._swappable(s1) and self._swappable(s2) and (self._calls(s1) or self._calls(s2)):
                self._swap(func, s1, s2)

    def _walk_stmt(self, func, s):
        src = self.src
        if src.any_pp(s.start, s.end):
            # only the pieces outside #if blocks: recurse into blocks
            if s.kind == "block":
                for c in s.stmts:
                    self._walk_stmt(func, c)
            return
        k = s.kind
        if k == "block":
            self._walk_block(func, s)
            return
        if k in ("expr", "decl", "return"):
            if self._is_check(s):
                return
            if k == "expr":
                if self._calls(s):
                    self._delete(func, s, "delete-call")
                elif self._assigns(s):
                    self._delete(func, s, "delete-assign")
            if not self._compile_time(s):
                self._expressions(func, s.start, s.end - 1, s)
            for lam in s.lambdas:
                if lam.body is not None:
                    self._walk_block(lam, lam.body)
            return
        if k == "if":
            if getattr(s, "constexpr", False):
                self._walk_stmt(func, s.body)
                if s.orelse:
                    self._walk_stmt(func, s.orelse)
                return
            self._delete(func, s, "delete-if", text_end=s.cond[1] + 1)
            self._condition(func, s)
            self._walk_stmt(func, s.body)
            if s.orelse:
                self._walk_stmt(func, s.orelse)
            return
        if k in ("while", "for", "do"):
            if s.cond:
                self._condition(func, s)
            elif k == "for":  # range-for: its range expression
                pass
            self._break(func, s)
            self._walk_stmt(func, s.body)
            return
        if k == "switch":
            self._walk_stmt(func, s.body)
            return
        if k == "try":
            self._walk_stmt(func, s.body)
            for h in s.handlers:
                self._walk_stmt(func, h)
            return

    def _is_check(self, s):
        first = self.src.toks[s.start].text
        return first in ("ZAP_ASSERT", "static_assert", "RL_ASSERT")

    def _compile_time(self, s):
        return any(t.text in ("constexpr", "static_assert", "consteval", "requires")
                   for t in self.src.toks[s.start:s.end])

    def _calls(self, s):
        toks = self.src.toks
        for i in range(s.start, s.end - 1):
            if toks[i + 1].text == "(" and (toks[i].kind == "ident" or toks[i].text in (">", ")")) \
                    and toks[i].text not in ("static_cast", "reinterpret_cast", "const_cast", "sizeof", "alignof",
                                             "decltype", "noexcept", "void"):
                return True
        return False

    def _assigns(self, s):
        return any(t.text in ASSIGN_OPS or t.text in ("++", "--") for t in self.src.toks[s.start:s.end])

    def _swappable(self, s):
        return s.kind == "expr" and not self._is_check(s) and not self.src.any_pp(s.start, s.end) \
            and not s.lambdas and (self._calls(s) or self._assigns(s))

    # Statement operators -----------------------------------------------------------
    def _delete(self, func, s, op, text_end=None):
        src = self.src
        m = self.add(func, op, s.start, text_end or s.end, None)
        a, b = src.toks[s.start].start, src.toks[s.end - 1].end
        m.edits = [Edit(a, b, lambda inner, m=m: f"{{ if (!{self.on(m)}) {{ {inner} }} }}", m)]

    def _swap(self, func, s1, s2):
        src = self.src
        m = self.add(func, "swap", s1.start, s2.end, None)
        copy = src.norm(s2.start, s2.end)
        a1 = src.toks[s1.start].start
        a2, b2 = src.toks[s2.start].start, src.toks[s2.end - 1].end
        m.edits = [Edit(a1, a1, lambda inner, m=m: f"if ({self.on(m)}) {{ {copy} }} ", m),
                   Edit(a2, b2, lambda inner, m=m: f"{{ if (!{self.on(m)}) {{ {inner} }} }}", m)]

    def _break(self, func, s):
        src = self.src
        body = s.body
        endless = s.cond is not None and (s.cond[0] == s.cond[1] or src.norm(*s.cond) == "true")
        if endless and not func.returns_void:
            # leaving `for (;;)` of a function that returns a value may fall
            # off its end (undefined behaviour, not a logic change)
            return
        head_end = s.cond[1] + 1 if s.kind != "do" and s.cond else (s.header[1] + 1 if s.kind == "for" else s.start + 1)
        m = self.add(func, "break", s.start, head_end, None)
        if body.kind == "block":
            close = src.toks[body.end - 1].start
            m.edits = [Edit(close, close, lambda inner, m=m: f" if ({self.on(m)}) break; ", m)]
        else:
            a, b = src.toks[body.start].start, src.toks[body.end - 1].end
            m.edits = [Edit(a, b, lambda inner, m=m: f"{{ {inner} if ({self.on(m)}) break; }}", m)]
        # A pass that `continue`s never reaches the body's end: the switch
        # stands before each `continue` of this loop too.
        for c in self._continues(body):
            a, b = src.toks[c.start].start, src.toks[c.end - 1].end
            m.edits.append(Edit(a, b, lambda inner, m=m: f"{{ if ({self.on(m)}) break; {inner} }}", m))

    def _continues(self, node):
        """The `continue` statements that go to the loop whose body is `node`:
        not those of a nested loop, nor any inside a switch (where the
        inserted `break` would leave the switch, not the loop)."""
        if node is None or node.kind in ("while", "for", "do", "switch"):
            return
        if node.kind == "continue":
            yield node
            return
        for child in node.stmts + [node.body, node.orelse] + node.handlers:
            yield from self._continues(child)

    def _condition(self, func, s):
        src = self.src
        a, b = s.cond
        if a >= b:
            return
        toks = src.toks[a:b]
        # no declaration or init-statement in the condition
        depth = 0
        for i in range(a, b):
            t = src.toks[i].text
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and (t == ";" or t == "=" or t == ":"):
                if t == ":" or t == ";" or t == "=":
                    self._expressions(func, a, b, s)
                    return
        m = self.add(func, "negate", a, b, None)
        sa, sb = src.toks[a].start, src.toks[b - 1].end
        m.edits = [Edit(sa, sb, lambda inner, m=m: f"({self.on(m)} != static_cast<bool>({inner}))", m)]
        self._expressions(func, a, b, s)

    # Expression operators ------------------------------------------------------------
    def _expressions(self, func, a, b, stmt):
        """Operators inside the expression tokens [a, b): chains of || and &&,
        comparisons, literals. Recurses into parenthesized groups."""
        src = self.src
        toks = src.toks
        self._chains(func, a, b)
        i = a
        while i < b:
            t = toks[i]
            if t.text in ("(", "["):
                j = src.partner[i]
                if t.text == "(" and i > 0 and toks[i - 1].text in ("ZAP_ASSERT", "static_assert", "sizeof",
                                                                   "alignof", "decltype", "noexcept", "alignas"):
                    i = j + 1
                    continue
                self._expressions(func, i + 1, j, stmt)
                i = j + 1
                continue
            if t.text == "{":
                j = src.partner[i]
                i = j + 1  # lambdas are walked as functions; braced lists keep their constants
                continue
            if t.kind == "punct" and t.text in CMP_SWAP and self._binary(i):
                self._boundary(func, i, a, b)
            elif t.kind == "number" and re.fullmatch(r"\d+[uUlL]*", t.text) and self._runtime_literal(i):
                self._literal(func, i, a, b)
            i += 1

    def _binary(self, i):
        """A comparison operator written with spaces around it (templates
        brackets have none in this code)."""
        src = self.src
        t, p, n = src.toks[i], src.toks[i - 1], src.toks[i + 1]
        return p.end < t.start and t.end < n.start

    def _runtime_literal(self, i):
        toks = self.src.toks
        p = toks[i - 1].text
        n = toks[i + 1].text if i + 1 < len(toks) else ""
        if p in ("<", ",") and n in (">", ","):
            return False  # template arguments
        if p == "[" or p == "{" or n == "}":
            return False  # array bounds, braced lists (narrowing)
        if p in ("case", "<<", ">>") or n in (":",):
            return False
        if p == "=" and toks[i - 2].text.startswith("."):
            return False
        return True

    def _operand_bounds(self, i, a, b):
        """The operands of the binary operator at token i within [a, b): to the
        nearest operator of lower precedence at the same depth."""
        src = self.src
        toks = src.toks
        stops = {"&&", "||", "?", ":", ",", "=", "&", "|", "^", "return", "==", "!="} | ASSIGN_OPS
        j = i - 1
        while j >= a:
            t = toks[j]
            if t.text in (")", "]", "}"):
                j = src.partner[j] - 1
                continue
            if t.text in stops or t.text in ("(", "[", "{", ";", "!") or t.text in CMP_SWAP and self._binary(j):
                break
            j -= 1
        left = j + 1
        k = i + 1
        while k < b:
            t = toks[k]
            if t.text in ("(", "[", "{"):
                k = src.partner[k] + 1
                continue
            if t.text in stops or t.text in (")", "]", "}", ";") or t.text in CMP_SWAP and self._binary(k):
                break
            k += 1
        return left, k

    def _boundary(self, func, i, a, b):
        src = self.src
        toks = src.toks
        left, right = self._operand_bounds(i, a, b)
        if left >= i or right <= i + 1:
            return
        op = toks[i].text
        m = self.add(func, "boundary", left, right, None, detail=f"{op} -> {CMP_SWAP[op]}")
        names = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
        fn = names[op]
        la, lb = toks[left].start, toks[i - 1].end
        ra, rb = toks[i + 1].start, toks[right - 1].end
        # left operand [la, lb), operator, right operand [ra, rb): one edit
        # over the whole comparison, with the operands' own edits inside.
        whole_a, whole_b = la, rb
        text = src.text

        def render(inner, m=m, fn=fn, la=la, lb=lb, ra=ra, rb=rb):
            # inner is text[la:rb] with nested edits applied; split it at the
            # operator, which no nested edit touches (it lies between them).
            op_text = text[toks[i].start:toks[i].end]
            before_op = text[lb:toks[i].start]
            after_op = text[toks[i].end:ra]
            marker = before_op + op_text + after_op
            # the operator sits after the last nested edit of the left operand:
            # find it from the right of the left operand's rendered text.
            pos = inner.rfind(marker)
            while pos != -1 and not _balanced(inner[:pos]):
                pos = inner.rfind(marker, 0, pos)
            lhs, rhs = inner[:pos], inner[pos + len(marker):]
            return f"::zap::schemata::{fn}({self.on(m)}, {lhs}, {rhs})"

        m.edits = [Edit(whole_a, whole_b, render, m)]

    def _literal(self, func, i, a, b):
        src = self.src
        t = src.toks[i]
        digits = re.match(r"\d+", t.text).group(0)
        suffix = t.text[len(digits):]
        if len(digits) > 1 and digits.startswith("0"):
            return  # octal
        n = int(digits)
        for op, value in (("plus-one", n + 1), ("minus-one", n - 1)):
            if value < 0:
                continue
            m = self.add(func, op, i, i + 1, None, detail=f"{n} -> {value}")
            # its id text: the expression it stands in, then the literal
            m.text = src.norm(a, b) + " ~ " + t.text
            m.edits = [Edit(t.start, t.end, lambda inner, m=m, v=value, s=suffix:
                            f"({self.on(m)} ? {v}{s} : {inner})", m)]

    def _chains(self, func, a, b):
        """|| and && chains at the top level of [a, b)."""
        src = self.src
        toks = src.toks
        for op, name in (("||", "drop-or"), ("&&", "drop-and")):
            parts, start, depth_ok = [], a, False
            i = a
            splits = []
            while i < b:
                t = toks[i]
                if t.text in ("(", "[", "{"):
                    i = src.partner[i] + 1
                    continue
                if t.text in ("?", ":", "=", ",") or t.text in ASSIGN_OPS or t.text == "return":
                    # not a plain chain; look only at chains in parentheses
                    splits = None
                    break
                if t.text == op:
                    splits.append(i)
                i += 1
            if not splits:
                continue
            bounds = [a] + [s + 1 for s in splits]
            ends = splits + [b]
            for x, y in zip(bounds, ends):
                if x >= y:
                    continue
                # an operand holding the other operator, at its top level: the
                # other operator's chain (when this is &&, || binds looser)
                if name == "drop-or" and not any(toks[k].text == "(" and toks[k - 1].kind == "ident"
                                                 for k in range(x + 1, y)):
                    continue
                m = self.add(func, name, x, y, None)
                sa, sb = toks[x].start, toks[y - 1].end
                if name == "drop-or":
                    m.edits = [Edit(sa, sb, lambda inner, m=m: f"(!{self.on(m)} && ({inner}))", m)]
                else:
                    m.edits = [Edit(sa, sb, lambda inner, m=m: f"({self.on(m)} || ({inner}))", m)]


def _balanced(s):
    d = 0
    for c in s:
        if c in "([{":
            d += 1
        elif c in ")]}":
            d -= 1
    return d == 0


# ---- ids -------------------------------------------------------------------------

def assign_ids(mutants):
    seen = {}
    for m in mutants:
        key = f"{m.file}:{m.function}:{m.op}:{m.text}"
        seen[key] = seen.get(key, 0) + 1
        m.id = f"{key}#{seen[key]}"
        m.short = short_id(m.id)
    shorts = {}
    for m in mutants:
        if m.short in shorts:
            raise ValueError(f"two mutants share the short id {m.short}: {m.id} and {shorts[m.short]}")
        shorts[m.short] = m.id


def find_all(root):
    """Every logic mutant of src/zap/, in file order."""
    base = os.path.join(root, "src", "zap")
    out, per_file = [], {}
    for name in sorted(os.listdir(base)):
        if not name.endswith(".hpp") or name in SKIP_HEADERS:
            continue
        fm = FileMutants(name, open(os.path.join(base, name)).read())
        fm.find()
        per_file[name] = fm
        out += fm.mutants
    assign_ids(out)
    return out, per_file


# ---- seeds ---------------------------------------------------------------------------

class Seed:
    def __init__(self, name, patch):
        self.name, self.patch = name, patch
        self.id = f"seed:{name}"
        self.short = self.id
        self.index = None
        self.edits = []
        self.file = None
        self.op = "seed"
        self.function = ""
        self.text = ""
        self.line = 0
        self.detail = ""

    def as_dict(self):
        return {"id": self.id, "short": self.short, "file": self.file, "function": "", "op": "seed",
                "text": os.path.basename(self.patch), "line": self.line, "detail": ""}


def patched_text(root, patch, name):
    """The header `name` of src/zap with `patch` applied (fuzz allowed, as the
    seed builds always did)."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "src", "zap"))
        files = re.findall(r"^\+\+\+ b/(\S+)", open(patch).read(), re.M)
        for f in files:
            with open(os.path.join(root, f)) as i, open(os.path.join(d, f), "w") as o:
                o.write(i.read())
        subprocess.run(["patch", "-s", "-p1", "-d", d, "-i", os.path.abspath(patch)], check=True, stdout=subprocess.DEVNULL)
        return {os.path.basename(f): open(os.path.join(d, f)).read() for f in files}


def _blocks(func_nodes):
    """Every block node of the functions, with its depth."""
    out = []

    def walk(n, depth):
        if n is None:
            return
        if n.kind == "block":
            out.append((n, depth))
            for c in n.stmts:
                walk(c, depth + 1)
            return
        for c in (n.body, n.orelse):
            walk(c, depth + 1)
        for h in n.handlers:
            walk(h, depth + 1)
        for lam in n.lambdas:
            walk(lam.body, depth + 1)

    for f in func_nodes:
        walk(f.body, 0)
    return out


def seed_regions(src, old_text, new_text):
    """The changed places of a seed as ((a, b), (c, d)): O lines [a, b) and
    P lines [c, d), 0-based, half-open; each O range the whole lines of a
    run of statements of one block (widened to the block's end when it
    declares something), holding every change it meets whole."""
    old_lines = old_text.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    ops = [o for o in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes()
           if o[0] != "equal"]
    blocks = _blocks(src.functions)

    def inside(r, i1, i2):
        return r[0] <= i1 and i2 <= r[1]

    regions = [[i1, i2] for _, i1, i2, _, _ in ops]
    new_src = cxxparse.Source(new_text)
    new_decls = [(new_src.toks[s.start].line - 1, new_src.toks[s.end - 1].line) for blk, _ in _blocks(new_src.functions)
                 for s in blk.stmts if s.kind in ("decl", "label")]
    declares = set()  # O regions whose patched text declares something: to the block's end
    while True:
        before = [list(r) for r in regions]
        regions = sorted([list(_widen(src, blocks, a, b, tuple(r) in declares)) for a, b in regions
                          for r in [[a, b]]])
        merged = []
        for r in regions:
            if merged and r[0] < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], r[1])
            else:
                merged.append(r)
        regions = merged
        for r in regions:
            for _, i1, i2, _, _ in ops:
                if i1 < r[1] and i2 > r[0] and not inside(r, i1, i2):
                    r[0], r[1] = min(r[0], i1), max(r[1], i2)
        for r in regions:
            c, d = _p_range(ops, r)
            if tuple(r) not in declares and any(c <= x and y <= d for x, y in new_decls):
                declares.add(tuple(r))
                before = None
            if not _braces_balanced("".join(new_lines[c:d])) or not _braces_balanced("".join(old_lines[r[0]:r[1]])):
                # the patch moves a block's edge: take the whole block
                r[0], r[1] = _enclosing_block_lines(src, blocks, r)
                before = None
        if regions == before:
            break
    result = []
    for a, b in regions:
        before_delta = inside_delta = 0
        for _, i1, i2, j1, j2 in ops:
            delta = (j2 - j1) - (i2 - i1)
            if inside((a, b), i1, i2):
                inside_delta += delta
            elif i2 <= a:
                before_delta += delta
        result.append(((a, b), (a + before_delta, b + before_delta + inside_delta)))
    return result


def _braces_balanced(text):
    depth = 0
    for t in cxxparse.tokenize(text):
        if t.text in ("{", "(", "["):
            depth += 1
        elif t.text in ("}", ")", "]"):
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _enclosing_block_lines(src, blocks, r):
    """The lines of the innermost block holding lines [r0, r1), braces included."""
    toks = src.toks
    best = None
    for blk, depth in blocks:
        open0, close0 = toks[blk.start].line - 1, toks[blk.end - 1].line - 1
        if open0 < r[0] and close0 >= r[1] and (best is None or depth > best[1]):
            best = (blk, depth)
    blk = best[0]
    return toks[blk.start].line - 1, toks[blk.end - 1].line


def _p_range(ops, r):
    before_delta = inside_delta = 0
    for _, i1, i2, j1, j2 in ops:
        delta = (j2 - j1) - (i2 - i1)
        if r[0] <= i1 and i2 <= r[1]:
            inside_delta += delta
        elif i2 <= r[0]:
            before_delta += delta
    return r[0] + before_delta, r[1] + before_delta + inside_delta


def _widen(src, blocks, a, b, to_end=False):
    """O lines [a, b) (0-based) widened to the whole lines of a run of
    statements of the innermost block holding them."""
    toks = src.toks
    inside = [i for i, t in enumerate(toks) if a <= t.line - 1 < b]
    best = None
    for blk, depth in blocks:
        open0, close0 = toks[blk.start].line - 1, toks[blk.end - 1].line - 1
        if inside:
            ok = blk.start < inside[0] and inside[-1] < blk.end - 1
        else:
            ok = open0 < a and close0 >= a
        if ok and (best is None or depth > best[1]):
            best = (blk, depth)
    if best is None:
        raise ValueError(f"lines {a + 1}-{b}: not inside a function body")
    blk = best[0]
    stmts = blk.stmts
    if not stmts:
        raise ValueError(f"lines {a + 1}-{b}: an empty block")
    if inside:
        run = [k for k, s in enumerate(stmts) if s.end > inside[0] and s.start <= inside[-1]]
    else:
        run = [k for k, s in enumerate(stmts) if toks[s.end - 1].line - 1 < a][-1:] or [0]
    first, last = run[0], run[-1]
    if to_end or any(stmts[k].kind in ("decl", "label") for k in range(first, last + 1)):
        last = len(stmts) - 1
    na = min(a, toks[stmts[first].start].line - 1) if inside else toks[stmts[first].start].line - 1
    nb = max(b, toks[stmts[last].end - 1].line) if inside else max(a, toks[stmts[last].end - 1].line)
    na = min(na, a)
    for k, st in enumerate(stmts):
        if k < first and toks[st.end - 1].line - 1 >= na or k > last and toks[st.start].line - 1 < nb:
            raise ValueError(f"lines {na + 1}-{nb} share a line with another statement")
    if toks[blk.start].line - 1 >= na or toks[blk.end - 1].line - 1 < nb:
        raise ValueError(f"lines {na + 1}-{nb} share a line with their block's braces")
    return na, nb


def seed_edits(root, seed, per_file):
    """The edits that put a seed into the schemata tree."""
    new = patched_text(root, seed.patch, None)
    for name, new_text in new.items():
        fm = per_file[name]
        old_text = fm.src.text
        seed.file = name
        old_lines = old_text.splitlines(keepends=True)
        new_lines = new_text.splitlines(keepends=True)
        starts = [0]
        for ln in old_lines:
            starts.append(starts[-1] + len(ln))
        for (lo, hi), (c, d) in seed_regions(fm.src, old_text, new_text):
            seed.line = seed.line or lo + 1
            a, b = starts[lo], starts[hi]
            patched = "".join(new_lines[c:d])

            def fn(inner, seed=seed, patched=patched, lo=lo, hi=hi, c=c):
                return (f"if (ZAP_MUTANT_ON({seed.index})) {{\n#line {c + 1}\n{patched}}} else {{\n#line {lo + 1}\n"
                        f"{inner}}}\n#line {hi + 1}\n")
            seed.edits.append(Edit(a, b, fn, seed))
    return seed


# ---- the schemata tree ------------------------------------------------------------------

def render(text, edits):
    """text with every edit applied, nested edits inside their parents."""
    edits = sorted(edits, key=lambda e: (e.start, -e.end, 0 if e.start != e.end else 1))
    dropped = []

    def build(a, b, es):
        out, pos, k = [], a, 0
        while k < len(es):
            e = es[k]
            kids = []
            k += 1
            while k < len(es) and es[k].start >= e.start and es[k].end <= e.end and not (
                    e.start == e.end):
                kids.append(es[k])
                k += 1
            # an edit starting inside e and ending after it: not nestable
            while k < len(es) and es[k].start < e.end and es[k].end > e.end:
                dropped.append(es[k])
                k += 1
            out.append(text[pos:e.start])
            inner = build(e.start, e.end, kids)
            rewritten = e.fn(inner)
            if not isinstance(e.mutant, Seed) and rewritten.count("\n") != inner.count("\n"):
                # a logic mutant keeps every line where it is (ZAP_MUTATE's
                # PATH:LINE and Relacy's histories name src/'s lines)
                raise ValueError(f"{e.mutant.id}: its rewrite moves lines")
            out.append(rewritten)
            pos = e.end
        out.append(text[pos:b])
        return "".join(out)

    return build(0, len(text), edits), dropped


RUNTIME = r'''// SPDX-License-Identifier: MIT
// Generated by model/mutate-logic: the run-time switch of the schemata tree.
// ZAP_MUTANT names one mutant (a short id m........ or seed:NAME) that this
// process runs; unset, every switch is off and the tree behaves as src/.
// ZAP_MUTANT_COVERAGE names a file to which the id of every switch the
// process evaluates is appended the first time it does: at once, not at
// exit, since a death test's child ends in abort(), which runs no exit
// handler. With ZAP_MUTANT_STATIC=N defined (GenMC) the switch is a
// constant.
#pragma once
#pragma GCC system_header

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace zap::schemata {

inline constexpr int count = @COUNT@;
inline constexpr const char* ids[count] = {
@IDS@
};

#if defined(ZAP_MUTANT_STATIC)
constexpr bool on(int n) noexcept { return n == ZAP_MUTANT_STATIC; }
#else
struct State {
    int active = -1;
    unsigned char* hits = nullptr;
    const char* coverage = nullptr;
};

inline State& state() noexcept;

inline void report() noexcept {
    State& s = state();
    if (s.active >= 0 && s.hits[s.active] == 0)
        std::fprintf(stderr, "ZAP_MUTANT: mutant %s never reached\n", ids[s.active]);
}

inline void record(const char* coverage, int n) noexcept {
    if (std::FILE* f = std::fopen(coverage, "a")) {
        std::fprintf(f, "%s\n", ids[n]);
        std::fclose(f);
    }
}

inline State& state() noexcept {
    static State s = [] {
        State made;
        const char* id = std::getenv("ZAP_MUTANT");
        const char* coverage = std::getenv("ZAP_MUTANT_COVERAGE");
        if (id != nullptr && *id != '\0') {
            for (int i = 0; i < count; ++i)
                if (std::strcmp(ids[i], id) == 0) made.active = i;
            if (made.active < 0) {
                std::fprintf(stderr, "ZAP_MUTANT: no mutant %s in this build\n", id);
                std::exit(2);
            }
            std::fprintf(stderr, "ZAP_MUTANT: running mutant %s\n", id);
        }
        if (made.active >= 0 || (coverage != nullptr && *coverage != '\0')) {
            made.hits = static_cast<unsigned char*>(std::calloc(count, 1));
            made.coverage = coverage != nullptr && *coverage != '\0' ? coverage : nullptr;
            std::atexit(report);
        }
        return made;
    }();
    return s;
}

// Made at start-up, so that a process whose run evaluates no switch at all
// still says at exit that the mutant it was given was never reached.
inline const bool started = (state(), true);

inline bool on(int n) noexcept {
    State& s = state();
    if (s.hits != nullptr && __atomic_exchange_n(&s.hits[n], 1, __ATOMIC_RELAXED) == 0 && s.coverage != nullptr)
        record(s.coverage, n);
    return n == s.active;
}
#endif

// The boundary operator: the coded comparison, or its neighbour.
template <class A, class B> constexpr bool lt(bool m, A a, B b) { return m ? a <= b : a < b; }
template <class A, class B> constexpr bool le(bool m, A a, B b) { return m ? a < b : a <= b; }
template <class A, class B> constexpr bool gt(bool m, A a, B b) { return m ? a >= b : a > b; }
template <class A, class B> constexpr bool ge(bool m, A a, B b) { return m ? a > b : a >= b; }

}  // namespace zap::schemata

#define ZAP_MUTANT_ON(n) (::zap::schemata::on(n))
'''


def seeds_of(root):
    d = os.path.join(root, "model", "seed")
    return [Seed(f[:-len(".patch")], os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".patch")]


def build_tree(root, out, with_seeds=True):
    """Writes the schemata tree: out/src/zap/*.hpp (every header of src/zap,
    each mutant and seed behind its switch, every line where src/ has it)
    and out/mutants.json. Returns (mutants, seeds, problems)."""
    import json
    mutants, per_file = find_all(root)
    seeds = seeds_of(root) if with_seeds else []
    problems = []
    for i, m in enumerate(mutants):
        m.index = i
    for k, s in enumerate(seeds):
        s.index = len(mutants) + k
        try:
            seed_edits(root, s, per_file)
        except (ValueError, subprocess.CalledProcessError) as e:
            problems.append(f"seed {s.name}: {e}")
            s.edits = []
    everything = mutants + seeds
    zap_dir = os.path.join(out, "src", "zap")
    os.makedirs(zap_dir, exist_ok=True)
    base = os.path.join(root, "src", "zap")
    dropped_ids = set()
    for name in sorted(os.listdir(base)):
        if not name.endswith(".hpp"):
            continue
        text = open(os.path.join(base, name)).read()
        edits = [e for m in everything if m.file == name for e in m.edits]
        new, dropped = render(text, edits)
        for e in dropped:
            dropped_ids.add(e.mutant.id)
        lines = new.split("\n", 1)
        if not lines[0].startswith("// SPDX"):
            problems.append(f"{name}: the first line is not the SPDX line")
        new = "#include <zap/schemata.hpp>  " + new
        _write_if_changed(os.path.join(zap_dir, name), new)
    for d in dropped_ids:
        problems.append(f"not nestable with another mutant (left out): {d}")
    live = [m for m in everything if m.id not in dropped_ids]
    # a dropped mutant keeps its switch number but its switch is never
    # evaluated: the runner reports it as not built.
    ids = ",\n".join(f'    "{m.short}"' for m in everything)
    _write_if_changed(os.path.join(zap_dir, "schemata.hpp"),
                      RUNTIME.replace("@COUNT@", str(len(everything))).replace("@IDS@", ids))
    manifest = {"mutants": [dict(m.as_dict(), index=m.index, built=m.id not in dropped_ids) for m in everything],
                "problems": problems}
    _write_if_changed(os.path.join(out, "mutants.json"), json.dumps(manifest, indent=1) + "\n")
    return mutants, seeds, problems


def _write_if_changed(path, text):
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path, "w") as f:
        f.write(text)
