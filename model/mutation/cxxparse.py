# SPDX-License-Identifier: MIT
"""A small C++ reader for the logic mutants (model/mutate-logic).

It is not a compiler: it reads the headers of src/zap/, which follow one
style (clang-format, binary operators between spaces, template brackets
without), into what the mutation operators need:

- tokens, with their offsets and lines (comments dropped, preprocessor lines
  kept apart);
- the function bodies (functions, member functions, constructors, lambdas),
  each with its qualified name (namespace and class names stripped to the
  class: `BasicThreadPool::notify_slow`);
- in each body, the statements as a tree: blocks, if/else, loops, switch,
  try, and simple statements, each simple one classified as a declaration,
  an expression statement or a jump (return, break, continue).

Everything a mutant needs is a range of the source text (start and end
offsets), so the schemata generator can rewrite it in place.
"""

import re

KEYWORDS_CONTROL = {"if", "while", "for", "do", "switch", "try", "return", "break", "continue",
                    "case", "default", "goto", "else", "catch", "co_return", "co_await", "co_yield"}
SCOPE_KEYWORDS = {"class", "struct", "union", "enum", "namespace"}

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>(?:u8|u|U|L)?R"(?P<delim>[^(\s]*)\(.*?\)(?P=delim)"|(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<char>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])+')
  | (?P<number>\.?\d(?:[\w.]|'(?=\w)|[eEpP][+-])*)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<punct><=>|<<=|>>=|::|->\*|->|\+\+|--|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|<<|>>|\.\.\.|[^\s])
""", re.S | re.X)


class Tok:
    __slots__ = ("kind", "text", "start", "end", "line", "pp")

    def __init__(self, kind, text, start, end, line, pp):
        self.kind, self.text, self.start, self.end, self.line, self.pp = kind, text, start, end, line, pp

    def __repr__(self):
        return f"{self.text!r}@{self.line}"


def tokenize(text):
    """Tokens of `text`. Preprocessor lines are not tokens; a token between
    an #if and its #endif carries pp=True (code that a platform may not
    compile: the operators leave it alone)."""
    toks = []
    pos, line, depth = 0, 1, 0
    n = len(text)
    at_line_start = True
    while pos < n:
        if at_line_start:
            m = re.match(r"[ \t]*#", text[pos:pos + 200])
            if m:
                # a preprocessor line, with its continuations
                end = pos
                while True:
                    nl = text.find("\n", end)
                    if nl == -1:
                        nl = n
                        break
                    if text[nl - 1] == "\\":
                        end = nl + 1
                        continue
                    break
                directive = text[pos:nl].strip()
                word = re.match(r"#\s*(\w+)", directive)
                word = word.group(1) if word else ""
                if word in ("if", "ifdef", "ifndef"):
                    # include guards are #pragma once here; any #if counts
                    depth += 1
                elif word == "endif":
                    depth -= 1
                line += text.count("\n", pos, nl)
                pos = nl
                continue
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"cannot read the text at line {line}: {text[pos:pos + 30]!r}")
        kind = m.lastgroup
        if kind == "delim":
            kind = "string"
        s = m.group(0)
        if kind == "ws":
            nls = s.count("\n")
            if nls:
                at_line_start = True
                line += nls
            pos = m.end()
            continue
        if kind == "comment":
            line += s.count("\n")
            pos = m.end()
            continue
        at_line_start = False
        toks.append(Tok(kind, s, m.start(), m.end(), line, depth > 0))
        line += s.count("\n")
        pos = m.end()
    return toks


def match_brackets(toks):
    """Index of the partner of every (, [, { and ), ], }."""
    partner = {}
    stack = []
    pairs = {")": "(", "]": "[", "}": "{"}
    for i, t in enumerate(toks):
        if t.kind != "punct":
            continue
        if t.text in "([{":
            stack.append(i)
        elif t.text in pairs:
            if not stack or toks[stack[-1]].text != pairs[t.text]:
                raise ValueError(f"unbalanced {t.text} at line {t.line}")
            j = stack.pop()
            partner[i], partner[j] = j, i
    if stack:
        raise ValueError(f"unclosed {toks[stack[-1]].text} at line {toks[stack[-1]].line}")
    return partner


class Node:
    """A statement. kind: block, if, while, for, do, switch, try, decl, expr,
    return, break, continue, label, empty, other. start/end: token indices
    (end exclusive). For control statements: cond (token range of the
    condition, exclusive bounds inside the parentheses), body (Node),
    orelse (Node or None). For blocks: stmts."""

    def __init__(self, kind, start, end, **kw):
        self.kind, self.start, self.end = kind, start, end
        self.cond = kw.get("cond")
        self.body = kw.get("body")
        self.orelse = kw.get("orelse")
        self.stmts = kw.get("stmts", [])
        self.lambdas = kw.get("lambdas", [])
        self.handlers = kw.get("handlers", [])


class Function:
    def __init__(self, name, open_brace, close_brace, is_constexpr, is_lambda):
        self.name = name
        self.open, self.close = open_brace, close_brace
        self.is_constexpr = is_constexpr
        self.is_lambda = is_lambda
        self.returns_void = False  # void, a constructor or destructor (lambdas: unknown, False)
        self.body = None  # Node(block)


class Source:
    def __init__(self, text):
        self.text = text
        self.toks = tokenize(text)
        self.partner = match_brackets(self.toks)
        self.functions = []
        self._scope(0, len(self.toks), [])
        for f in self.functions:
            f.body = self._block(f.open, f)

    # ---- declaration level --------------------------------------------------

    def _skip_angles(self, i, end):
        """From a `<` (after `template`, or of a template's arguments), the
        index after its matching `>`."""
        depth = 0
        while i < end:
            t = self.toks[i].text
            if t in "([{":
                i = self.partner[i] + 1
                continue
            if t == "<":
                depth += 1
            elif t == ">":
                depth -= 1
            elif t == ">>":
                depth -= 2
            i += 1
            if depth <= 0:
                return i
        return i

    def _scope(self, i, end, names):
        """Declarations of a namespace or class body from token i to end."""
        toks = self.toks
        decl_start = i
        scope_kw = None
        scope_name = None
        has_paren = False
        has_assign = False
        is_constexpr = False
        last_ident_before_paren = None
        returns_void = False
        init_list = False
        while i < end:
            t = toks[i]
            if t.text == "template" and i + 1 < end and toks[i + 1].text == "<":
                i = self._skip_angles(i + 1, end)
                continue
            if t.text in (";",) :
                decl_start, scope_kw, scope_name, has_paren, has_assign, is_constexpr = i + 1, None, None, False, False, False
                last_ident_before_paren = None
                init_list = False
                i += 1
                continue
            if t.text in ("public", "private", "protected") and i + 1 < end and toks[i + 1].text == ":":
                i += 2
                decl_start = i
                continue
            if t.kind == "ident":
                if t.text in SCOPE_KEYWORDS and not has_paren and not has_assign:
                    scope_kw = t.text
                elif scope_kw and scope_name is None and t.text not in ("class", "struct", "alignas", "final"):
                    scope_name = t.text
                if t.text in ("constexpr", "consteval"):
                    is_constexpr = True
            if t.text == "=" and toks[i - 1].text != "operator":
                has_assign = True
            if t.text == ":" and has_paren and not has_assign:
                init_list = True
            if t.text == "(":
                if toks[i - 1].text in ("alignas", "noexcept", "requires", "decltype"):
                    i = self.partner[i] + 1
                    continue
                if not has_paren and not has_assign:
                    # the declarator's name: the token before the first paren
                    k = i - 1
                    name = toks[k].text
                    if toks[k - 1].text == "~":
                        name = "~" + name
                    if toks[k].kind != "ident" or toks[k - 1].text == "operator":
                        k2 = k
                        while k2 >= decl_start and toks[k2].text != "operator":
                            k2 -= 1
                        if k2 >= decl_start:
                            name = "operator" + "".join(x.text for x in toks[k2 + 1:i])
                    last_ident_before_paren = name
                    returns_void = toks[k - 1].text == "void" or name.startswith("~") or \
                        toks[k - 1].text in ("explicit", "inline", "constexpr", ";", "{", "}", ":") and name[:1].isupper()
                    has_paren = True
                i = self.partner[i] + 1
                continue
            if t.text == "[":
                i = self.partner[i] + 1
                continue
            if t.text == "{":
                close = self.partner[i]
                if scope_kw and not has_paren:
                    if scope_kw == "enum":
                        pass
                    else:
                        inner = names + ([scope_name] if scope_kw != "namespace" and scope_name else [])
                        self._scope(i + 1, close, inner)
                    i = close + 1
                    # `struct X {...} x;` continues the declaration; `};` ends it
                    scope_kw = None
                    continue
                if has_paren and not has_assign and init_list and toks[i - 1].kind == "ident" or \
                        has_paren and not has_assign and init_list and toks[i - 1].text == ">":
                    i = close + 1  # a constructor's member initializer `a_{x}`
                    continue
                if has_paren and not has_assign:
                    # a function body
                    body = i
                    if True:
                        name = "::".join(names[-1:] + [last_ident_before_paren or "?"])
                        self.functions.append(Function(name, body, self.partner[body], is_constexpr, False))
                        self.functions[-1].returns_void = returns_void
                        self._lambdas_in(decl_start, body, names)
                        i = self.partner[body] + 1
                        decl_start, scope_kw, scope_name, has_paren, has_assign, is_constexpr = i, None, None, False, False, False
                        init_list = False
                        continue
                # an initializer (or a lambda in one)
                self._lambdas_in(i, close + 1, names)
                i = close + 1
                continue
            i += 1

    def _lambdas_in(self, a, b, names):
        """Lambda bodies in tokens [a, b): `]` or `)` or a specifier, then `{`."""
        toks = self.toks
        i = a
        while i < b:
            t = toks[i]
            if t.text == "{" and i > 0 and self._is_lambda_brace(i):
                close = self.partner[i]
                self.functions.append(Function("::".join(names[-1:] + ["<lambda>"]), i, close, False, True))
                i = close + 1
                continue
            i += 1

    def _is_lambda_brace(self, i):
        toks = self.toks
        j = i - 1
        # skip `-> type`, noexcept, mutable, constexpr
        while j >= 0 and toks[j].text in ("mutable", "noexcept", "constexpr"):
            j -= 1
        if toks[j].text == "]":
            return True
        if toks[j].text == ")":
            opener = self.partner[j]
            if opener > 0 and toks[opener - 1].text == "]":
                return True
            if opener > 0 and toks[opener - 1].text == "noexcept":
                return self._is_lambda_brace(opener - 1 + 0) if False else toks[self._before_noexcept(opener - 1)].text == ")" and toks[self.partner[self._before_noexcept(opener - 1)] - 1].text == "]"
        # -> ret type: walk back to `->`
        k = j
        while k >= 0 and toks[k].text not in ("->", ";", "{", "}", "(", ","):
            k -= 1
        if k >= 0 and toks[k].text == "->" and toks[k - 1].text in (")", "mutable", "noexcept"):
            m = k - 1
            while toks[m].text in ("mutable", "noexcept"):
                m -= 1
            if toks[m].text == ")":
                return toks[self.partner[m] - 1].text == "]"
        return False

    def _before_noexcept(self, i):
        return i - 1

    # ---- statements -----------------------------------------------------------

    def _block(self, open_i, func):
        close = self.partner[open_i]
        stmts = []
        i = open_i + 1
        while i < close:
            s = self._statement(i, close, func)
            stmts.append(s)
            i = s.end
        return Node("block", open_i, close + 1, stmts=stmts)

    def _paren_after(self, i):
        """i: index of `(`; returns (inner_start, inner_end, after)."""
        j = self.partner[i]
        return i + 1, j, j + 1

    def _statement(self, i, limit, func):
        toks = self.toks
        t = toks[i]
        x = t.text
        if x == "{":
            return self._block(i, func)
        if x == ";":
            return Node("empty", i, i + 1)
        if x == "if":
            j = i + 1
            constexpr = False
            if toks[j].text == "constexpr":
                constexpr = True
                j += 1
            if toks[j].text == "!":  # if !consteval
                j += 1
            a, b, after = self._paren_after(j)
            body = self._statement(after, limit, func)
            orelse = None
            end = body.end
            if end < limit and toks[end].text == "else":
                orelse = self._statement(end + 1, limit, func)
                end = orelse.end
            n = Node("if", i, end, cond=(a, b), body=body, orelse=orelse)
            n.constexpr = constexpr
            return n
        if x in ("while", "switch"):
            a, b, after = self._paren_after(i + 1)
            body = self._statement(after, limit, func)
            return Node(x, i, body.end, cond=(a, b), body=body)
        if x == "for":
            a, b, after = self._paren_after(i + 1)
            body = self._statement(after, limit, func)
            n = Node("for", i, body.end, cond=self._for_cond(a, b), body=body)
            n.header = (a, b)
            return n
        if x == "do":
            body = self._statement(i + 1, limit, func)
            assert toks[body.end].text == "while", f"do without while at line {t.line}"
            a, b, after = self._paren_after(body.end + 1)
            assert toks[after].text == ";"
            return Node("do", i, after + 1, cond=(a, b), body=body)
        if x == "try":
            body = self._block(i + 1, func)
            end = body.end
            handlers = []
            while end < limit and toks[end].text == "catch":
                a, b, after = self._paren_after(end + 1)
                h = self._block(after, func)
                handlers.append(h)
                end = h.end
            return Node("try", i, end, body=body, handlers=handlers)
        if x in ("case", "default") and not (x == "default" and toks[i + 1].text == "="):
            j = i
            while toks[j].text != ":" or toks[j + 1].text == ":":
                if toks[j].text == "::":
                    j += 1
                    continue
                j += 1
            return Node("label", i, j + 1)
        # a simple statement: to the `;` at depth 0
        j = i
        lambdas = []
        while j < limit and toks[j].text != ";":
            if toks[j].text in ("(", "["):
                j2 = self.partner[j]
                lambdas += self._lambda_nodes(j + 1, j2, func)
                j = j2 + 1
                continue
            if toks[j].text == "{":
                if self._is_lambda_brace(j):
                    lambdas.append(self._lambda(j, func))
                else:
                    lambdas += self._lambda_nodes(j + 1, self.partner[j], func)
                j = self.partner[j] + 1
                continue
            j += 1
        end = j + 1
        kind = self._classify(i, j)
        return Node(kind, i, end, lambdas=lambdas)

    def _lambda(self, brace, func):
        f = Function(func.name + "::<lambda>", brace, self.partner[brace], False, True)
        f.body = self._block(brace, f)
        return f

    def _lambda_nodes(self, a, b, func):
        out = []
        i = a
        while i < b:
            if self.toks[i].text == "{":
                if self._is_lambda_brace(i):
                    out.append(self._lambda(i, func))
                else:
                    out += self._lambda_nodes(i + 1, self.partner[i], func)
                i = self.partner[i] + 1
                continue
            if self.toks[i].text in ("(", "["):
                out += self._lambda_nodes(i + 1, self.partner[i], func)
                i = self.partner[i] + 1
                continue
            i += 1
        return out

    def _for_cond(self, a, b):
        """The condition of a classic for: between the two top-level `;`."""
        semis = []
        i = a
        while i < b:
            t = self.toks[i].text
            if t in "([{":
                i = self.partner[i] + 1
                continue
            if t == ";":
                semis.append(i)
            i += 1
        if len(semis) != 2:
            return None  # a range-for
        return (semis[0] + 1, semis[1])

    def _classify(self, i, j):
        toks = self.toks
        first = toks[i].text
        if first in ("return", "co_return"):
            return "return"
        if first in ("break", "continue", "goto"):
            return first
        if first in ("using", "typedef", "static_assert", "constexpr", "static", "const", "auto", "thread_local",
                     "volatile", "unsigned", "signed", "bool", "int", "char", "long", "short", "double", "float",
                     "struct", "class", "enum", "union", "typename", "alignas", "inline", "template"):
            return "decl"
        if first == "[" and toks[i + 1].text == "[":
            return "decl"  # [[maybe_unused]] ...
        if first in ("++", "--", "*", "(", "this", "::", "!", "delete", "new", "throw", "co_await", "co_yield", "~"):
            return "expr"
        if toks[i].kind != "ident":
            return "expr"
        # a (qualified, maybe templated) name, then what follows decides
        k = i
        while True:
            if toks[k].kind != "ident":
                break
            k += 1
            if k < j and toks[k].text == "<" and toks[k].start == toks[k - 1].end:
                k = self._skip_angles(k, j)  # template arguments written without a space
            if k < j and toks[k].text == "::":
                k += 1
                continue
            break
        if k >= j:
            return "expr"
        nxt = toks[k].text
        m = k
        while m < j and toks[m].text in ("*", "&", "&&", "const"):
            m += 1
        if toks[k].kind == "ident" or m > k and m + 1 < j and toks[m].kind == "ident" \
                and toks[m + 1].text in ("=", ";", "{", "(", "[", ",", ":"):
            return "decl"
        if nxt == "[" and toks[k - 1].text == "auto":
            return "decl"
        return "expr"

    # ---- helpers ----------------------------------------------------------------

    def text_of(self, a, b):
        """Source text of tokens [a, b)."""
        if a >= b:
            return ""
        return self.text[self.toks[a].start:self.toks[b - 1].end]

    def norm(self, a, b):
        """Tokens [a, b) joined by single spaces: the statement text of an id."""
        return " ".join(t.text for t in self.toks[a:b])

    def any_pp(self, a, b):
        return any(t.pp for t in self.toks[a:b])
