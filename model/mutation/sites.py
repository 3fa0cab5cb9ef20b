# SPDX-License-Identifier: MIT
"""Finds every memory-order argument and fence in src/zap/ by call site.

The parser works on tokens, not on a hand-kept list: each
`std::memory_order_X` token is mapped to the call whose argument list holds it;
that call's name gives the operation, and the line of the name token is the
line that std::source_location::current() reports for the call (GCC 12 gives
the line of the called name, also when the object expression or the
arguments sit on other lines: model/mutation/line_probe.cpp checks this).

A call to a helper of src/zap/ that takes a memory order and forwards its own
`loc = SourceLocation::current()` default argument to an atomic (load_sync,
cas_sync in pool_core.hpp) is a site of that atomic's operation at the
caller's line. A helper that does not forward the location is an error: its
single reported line would stand for every caller, so mutating "one site"
would mutate all of them.
"""

import os
import re

ORDERS = ("relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst")
RMW = ("exchange", "compare_exchange_weak", "compare_exchange_strong",
       "fetch_add", "fetch_sub", "fetch_or", "fetch_and")
# std::atomic::wait compares with a load of the order it names: a load.
OPS = ("load", "store", "fence", "wait") + RMW

# One step weaker, per operation kind: seq_cst drops to the
# strongest order the operation allows without it; acq_rel splits into its
# halves; acquire and release drop to relaxed (for a fence: no fence).
STEP = {
    "load": {"seq_cst": ["acquire"], "acquire": ["relaxed"], "consume": ["relaxed"]},
    "store": {"seq_cst": ["release"], "release": ["relaxed"]},
    "rmw": {"seq_cst": ["acq_rel"], "acq_rel": ["acquire", "release"],
            "acquire": ["relaxed"], "release": ["relaxed"], "consume": ["relaxed"]},
    "fence": {"seq_cst": ["acq_rel"], "acq_rel": ["acquire", "release"],
              "acquire": ["relaxed"], "release": ["relaxed"]},
}


def kind(op):
    return "rmw" if op in RMW else "load" if op == "wait" else op


def weakenings(op, order):
    return STEP[kind(op)].get(order, [])


class ParseError(Exception):
    pass


_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.']*|::|->|\S")


def _word_before(text, i):
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.'"):
        j -= 1
    return text[j:i] if text[j:j + 1].isdigit() else "x"  # only a number literal qualifies


def _strip(text):
    """Blanks comments and string/char literals, keeping every newline."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and i > 0 and text[i - 1].isalnum() and re.match(r"[\w.']*$", _word_before(text, i)):
            out.append(c)  # a digit separator (50'000), not a character literal
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokenize(text):
    toks = []
    for lineno, line in enumerate(_strip(text).split("\n"), 1):
        if line.lstrip().startswith("#"):
            continue  # preprocessor lines
        for m in _TOKEN.finditer(line):
            toks.append((m.group(), lineno))
    return toks


def _match_forward(toks, i):
    """Index of the token closing the bracket opened at i."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    open_, close = toks[i][0], pairs[toks[i][0]]
    depth = 0
    for j in range(i, len(toks)):
        if toks[j][0] == open_:
            depth += 1
        elif toks[j][0] == close:
            depth -= 1
            if depth == 0:
                return j
    raise ParseError("unbalanced bracket")


def _enclosing_paren(toks, i):
    depth = 0
    for j in range(i - 1, -1, -1):
        t = toks[j][0]
        if t in ")]}":
            depth += 1
        elif t in "([{":
            if depth == 0:
                return j if t == "(" else None
            depth -= 1
    return None


def _helpers(toks):
    """Functions defined in this file that take a memory order and a
    SourceLocation default argument: name -> (op they call with `loc`, or None)."""
    helpers = {}
    for i in range(len(toks) - 1):
        name = toks[i][0]
        if toks[i + 1][0] != "(" or not re.match(r"[A-Za-z_]\w*$", name) or name in OPS:
            continue
        close = _match_forward(toks, i + 1)
        params = [t for t, _ in toks[i + 2:close]]
        if "memory_order" not in params or "current" not in params:
            continue
        j = close + 1
        while j < len(toks) and toks[j][0] in ("const", "noexcept", "override"):
            j += 1
        if j >= len(toks) or toks[j][0] != "{":
            continue  # a declaration or a call, not a definition
        end = _match_forward(toks, j)
        op = None
        for k in range(j, end):
            if toks[k][0] in OPS and toks[k + 1][0] == "(":
                args = [t for t, _ in toks[k + 2:_match_forward(toks, k + 1)]]
                if "loc" in args:
                    fixed = [a[len("memory_order_"):] for a in args if a.startswith("memory_order_")]
                    op = (toks[k][0], fixed[0] if fixed else None)
                    break
        helpers[name] = op
    return helpers


def _receiver(toks, name_index):
    """The object expression before a called name: head_. / victim.head_. / Platform::"""
    j = name_index
    while j >= 2 and toks[j - 1][0] in (".", "->", "::") and re.match(r"[A-Za-z_]\w*$", toks[j - 2][0]):
        j -= 2
    return j


def find_sites(root, subdir="src/zap"):
    sites = []
    base = os.path.join(root, subdir)
    files = sorted(f for f in os.listdir(base) if f.endswith((".hpp", ".h", ".cpp")))
    # A helper may be called from another header (helping_wait.hpp calls the
    # pool's load_sync()): every file's helpers are known everywhere.
    shared = {}
    for fname in files:
        shared.update(_helpers(tokenize(open(os.path.join(base, fname)).read())))
    for fname in files:
        # The production platforms linux_ and windows_platform.hpp are what
        # the model's Relacy platform replaces: no model runs their orderings
        # (docs/platforms.md). portable_platform.hpp's Protocol T is a
        # template the Relacy model instantiates (model/timed_waits_models.cpp),
        # so its orderings are in the table.
        if fname in ("linux_platform.hpp", "windows_platform.hpp"):
            continue
        rel = f"{subdir}/{fname}"
        toks = tokenize(open(os.path.join(base, fname)).read())
        helpers = {**shared, **_helpers(toks)}
        calls = {}
        for i, (t, line) in enumerate(toks):
            m = re.match(r"memory_order_(\w+)$", t)
            if not m:
                continue
            if m.group(1) not in ORDERS:
                raise ParseError(f"{rel}:{line}: unknown order {t}")
            start = i - 2 if i >= 2 and toks[i - 1][0] == "::" else i
            if start > 0 and toks[start - 1][0] == "=":
                continue  # a default argument in a declaration (load_sync's relaxed)
            paren = _enclosing_paren(toks, i)
            if paren is None or paren == 0:
                raise ParseError(f"{rel}:{line}: {t} is not a call argument")
            args = [tok for tok, _ in toks[paren + 1:_match_forward(toks, paren)]]
            if "loc" in args:
                continue  # inside a helper, forwarding its caller's site (see _helpers)
            calls.setdefault(paren, []).append(m.group(1))
        for paren, orders in sorted(calls.items()):
            name, line = toks[paren - 1]
            if name in OPS:
                op, via = name, None
            elif name in helpers:
                if helpers[name] is None:
                    raise ParseError(f"{rel}:{line}: helper {name}() does not pass its caller's "
                                     "SourceLocation on: its calls cannot be told apart")
                op, via = helpers[name][0], name
                if helpers[name][1] is not None:
                    orders = orders + [helpers[name][1]]  # the failure order the helper fixes
            else:
                raise ParseError(f"{rel}:{line}: memory order passed to {name}(), not an atomic operation")
            close = _match_forward(toks, paren)
            start = _receiver(toks, paren - 1)
            text = "".join(tok + (" " if (re.match(r"\w", tok) and re.match(r"\w", nxt)) or tok == "," else "")
                           for (tok, _), (nxt, _) in zip(toks[start:close + 1], toks[start + 1:close + 2]))
            if op.startswith("compare_exchange") and len(orders) != 2 and via is None:
                raise ParseError(f"{rel}:{line}: {op} without success and failure orders")
            sites.append({
                "file": rel,
                "line": line,
                "op": op,
                "via": via,
                "order": orders[0],
                "failure": orders[1] if len(orders) > 1 else None,
                "call": text,
            })
    # A stable key that survives line moves: file, call text, ordinal among
    # identical calls in the file.
    seen = {}
    for s in sites:
        k = (s["file"], s["call"])
        s["key"] = f'{s["file"]}|{s["call"]}|{seen.get(k, 0)}'
        seen[k] = seen.get(k, 0) + 1
    return sites
