#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/api_reference.py ROOT [--list] - docs/api.md names every public name.

The public names are what the compiler sees, not a list kept by hand: clang
parses `#include <zap/zap.hpp>` (once with the native platform, once with
ZAP_PORTABLE_PLATFORM) and dumps its AST as JSON; every declaration in
namespace zap outside zap::detail counts - classes, class templates, aliases,
functions, variables, enums - and, inside each class that is public, every
member in a public section (functions, constructors, destructors, fields,
static members, nested types), but not what the compiler declares itself
(implicit members) or what is deleted. Macros are the ZAP_* macros still
defined after the include (clang -dM -E).

A class inherits names from its public base classes in zap::detail (the
CXXRecordDecl's "bases" with access "public"; BasicThreadPool from
detail::PoolCore, LinuxPlatform and PortablePlatform from
detail::StdPrimitives): the base's public members count as the class's own,
as C++ name lookup finds them - unless the class declares a member of the
same name, which hides them, or a using-declaration names them (`using
Core::schedule;` in a public section brings in the base's public or
protected members of that name, whatever the base's access; in a private or
protected section it keeps them from the public names). The base's
constructors and destructor are not inherited; but a class that declares no
destructor of its own, with a public base that declares a public one, counts
its implicit destructor (`ThreadPool::~ThreadPool()` runs ~PoolCore: the
reader needs its entry). A private base lends only what a public
using-declaration names; a public base in namespace zap itself is documented
under its own name.

An entry of docs/api.md is a Markdown heading; each code span in it names one
declaration, qualified by its class: `ThreadPool::schedule(Task& task)`,
`Config::max_threads`, `zap::available_parallelism()`, `ZAP_VERSION`. A
class may be named by its alias (ThreadPool for BasicThreadPool<StdPlatform>),
and its constructor and destructor as `ThreadPool::ThreadPool(...)` and
`ThreadPool::~ThreadPool()`. A function is named with its parameters, and
each overload needs its own span: overloads are told apart by their number
of parameters (a parameter pack counts one), so a new overload needs a new
span even when its name is documented.

Fails (exit 1), naming each, when a public name (or overload) has no entry,
and when an entry names something the headers do not declare (a stale
entry); an entry for a class that only another system compiles
(WindowsPlatform) must name a class that src/zap defines. Exits 77
(skipped) without clang++. --list prints the public names found.
"""
import json
import os
import re
import subprocess
import sys

RECORDS = ("CXXRecordDecl", "ClassTemplateDecl")
FUNCTIONS = ("FunctionDecl", "CXXMethodDecl", "CXXConstructorDecl", "CXXDestructorDecl", "CXXConversionDecl")
NAMED = ("FieldDecl", "VarDecl", "TypeAliasDecl", "TypedefDecl", "TypeAliasTemplateDecl", "EnumDecl", "ConceptDecl")
VARIANTS = ([], ["-DZAP_PORTABLE_PLATFORM"])


def clang(root, args):
    cmd = ["clang++", "-std=c++20", "-I" + os.path.join(root, "src"), "-x", "c++", "-"] + args
    return subprocess.run(cmd, input="#include <zap/zap.hpp>\n", capture_output=True, text=True, check=True).stdout


def ast_objects(text):
    decoder, i, objects = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return objects
        obj, i = decoder.raw_decode(text, i)
        objects.append(obj)


class Names:
    """Key "Scope::name" (or "name" at namespace scope) -> arities (None: not a function)."""

    def __init__(self):
        self.names = {}
        self.aliases = {}  # alias -> the class template it instantiates (ThreadPool -> BasicThreadPool)
        self.detail = {}  # name -> CXXRecordDecl of each class (template) of zap::detail, per AST

    def add(self, key, arity=None, overload=None):
        """overload: what tells this declaration from the others of its name (seen twice: one)."""
        self.names.setdefault(key, {})
        if arity is not None:
            self.names[key][overload] = arity

    def function(self, scope, node):
        if node.get("isImplicit") or node.get("explicitlyDeleted"):
            return
        if not scope and node["kind"] != "FunctionDecl":
            return  # a member function defined outside its class (parallel_invoke.hpp)
        name = re.sub(r"<.*", "", node["name"])  # a constructor is named BasicBatch<Platform>
        arity = sum(1 for c in node.get("inner", []) if c["kind"] == "ParmVarDecl")
        self.add(f"{scope}::{name}" if scope else name, arity, node.get("type", {}).get("qualType"))

    def member(self, scope, node):
        kind = node["kind"]
        if kind == "FunctionTemplateDecl":
            for inner in node.get("inner", []):
                if inner["kind"] in FUNCTIONS:
                    self.function(scope, inner)
        elif kind in FUNCTIONS:
            self.function(scope, node)
        elif kind in RECORDS:
            self.record(scope, node)
        elif kind in NAMED and node.get("name") and not node.get("isImplicit"):
            key = f"{scope}::{node['name']}" if scope else node["name"]
            self.add(key)
            target = node.get("type", {}).get("qualType", "")
            m = re.match(r"(?:zap::)?(Basic\w+)<", target)
            if not scope and kind in ("TypeAliasDecl", "TypeAliasTemplateDecl", "TypedefDecl") and m:
                self.aliases[node["name"]] = m.group(1)
            if kind == "TypeAliasTemplateDecl":
                for inner in node.get("inner", []):
                    m = re.match(r"(?:zap::)?(Basic\w+)<", inner.get("type", {}).get("qualType", ""))
                    if inner["kind"] == "TypeAliasDecl" and m:
                        self.aliases[node["name"]] = m.group(1)

    def record(self, scope, node):
        if node["kind"] == "ClassTemplateDecl":
            node = next((c for c in node.get("inner", []) if c["kind"] == "CXXRecordDecl"), None)
            if node is None:
                return
        if node.get("isImplicit") or not node.get("name") or not node.get("completeDefinition"):
            return
        name = f"{scope}::{node['name']}" if scope else node["name"]
        self.add(name)
        members = visible_members(node, self.detail)
        for child in members["public"]:
            self.member(name, child)
        if members["inherited destructor"]:
            self.add(f"{name}::~{node['name']}", 0, "implicit destructor")

    def namespace(self, node):
        for child in node.get("inner", []):
            if child["kind"] == "NamespaceDecl":
                continue  # zap::detail (and any other inner namespace) is not public
            self.member("", child)


USING = ("UsingDecl", "UnresolvedUsingValueDecl", "UnresolvedUsingTypenameDecl")
SPECIAL = ("CXXConstructorDecl", "CXXDestructorDecl")


def base_name(name):
    return re.sub(r"<.*", "", name or "").lstrip("~")


def is_special(node, record_name):
    """A constructor or destructor (or a template of one) of the record named record_name."""
    nodes = [node] + [c for c in node.get("inner", []) if node["kind"] == "FunctionTemplateDecl"]
    return any(n["kind"] in SPECIAL for n in nodes) or base_name(node.get("name")) == record_name


def visible_members(node, detail):
    """A record's members by access as C++ name lookup sees them from outside:
    {"public": [...], "protected": [...], "inherited destructor": bool}. Its own
    members, plus those of its public and protected bases in zap::detail (a
    public base keeps their access, a protected one makes them protected)
    that it neither hides nor redeclares with a using-declaration, plus what
    its using-declarations bring in from any of its bases there, private
    ones too, at the access of the section they are in. Private members are
    left out: nobody outside sees them."""
    access = "private" if node.get("tagUsed") == "class" else "public"
    own = {"public": [], "protected": [], "private": []}
    usings, declared, has_destructor = [], set(), False
    for child in node.get("inner", []):
        if child["kind"] == "AccessSpecDecl":
            access = child.get("access", "public")
        elif child["kind"] in USING:
            usings.append((access, child["name"].split("::")[-1]))
        elif child.get("name") and not child.get("isImplicit"):
            own[access].append(child)
            declared.add(child["name"])
            has_destructor |= child["kind"] == "CXXDestructorDecl"
    result = {"public": own["public"], "protected": own["protected"], "inherited destructor": False}
    using_names = {name for _, name in usings}
    for base in node.get("bases", []):
        qual = base.get("type", {}).get("qualType", "")
        m = re.match(r"(?:::)?(?:zap::)?detail::(\w+)", qual)
        if not m or m.group(1) not in detail:
            continue  # a base outside zap::detail is documented under its own name
        record = detail[m.group(1)]
        inherited = visible_members(record, detail)
        by_name = {}
        for level in ("public", "protected"):
            for child in inherited[level]:
                if not is_special(child, record["name"]):
                    by_name.setdefault(child["name"], []).append((level, child))
        for name, children in by_name.items():
            if name in declared or name in using_names or base.get("access") == "private":
                continue  # hidden by the class's own member, placed by a using-declaration, or private
            for level, child in children:
                result["public" if level == "public" and base["access"] == "public" else "protected"].append(child)
        for level, name in usings:
            if level in result:
                result[level].extend(child for _, child in by_name.get(name, []))
        if (not has_destructor and base.get("access") == "public"
                and (any(c["kind"] == "CXXDestructorDecl" for c in inherited["public"]) or inherited["inherited destructor"])):
            result["inherited destructor"] = True
    return result


def detail_records(objects):
    """Name -> definition of each class and class template of zap::detail (namespaces reopen: all of them)."""
    records = {}
    for obj in objects:
        if obj["kind"] != "NamespaceDecl" or obj.get("name") != "zap":
            continue
        for inner in obj.get("inner", []):
            if inner["kind"] != "NamespaceDecl" or inner.get("name") != "detail":
                continue
            for node in inner.get("inner", []):
                if node["kind"] == "ClassTemplateDecl":
                    node = next((c for c in node.get("inner", []) if c["kind"] == "CXXRecordDecl"), {})
                if node.get("kind") == "CXXRecordDecl" and node.get("completeDefinition") and node.get("name"):
                    records[node["name"]] = node
    return records


def public_names(root):
    names = Names()
    for variant in VARIANTS:
        dump = clang(root, ["-fsyntax-only", "-Xclang", "-ast-dump=json", "-Xclang", "-ast-dump-filter=zap"] + variant)
        objects = ast_objects(dump)
        names.detail = detail_records(objects)
        for obj in objects:
            if obj["kind"] == "NamespaceDecl" and obj.get("name") == "zap":
                names.namespace(obj)
        for line in clang(root, ["-dM", "-E"] + variant).splitlines():
            m = re.match(r"#define (ZAP_\w+)", line)
            if m and not any(v.startswith("-D" + m.group(1)) for v in variant):
                names.add(m.group(1))
    return names


def arity_of(params):
    params = params.strip()
    if params in ("", "void"):
        return 0
    depth, count = 0, 1
    for ch in params:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


# A code span naming a declaration: `zap::` at most once, then Scope::name
# (template arguments allowed on each part), then the parameters, if any,
# then qualifiers (const, noexcept, &&). An operator is a symbol or co_await.
SPAN = re.compile(r"\s*(?:zap::)?((?:~?\w+(?:<[^()`]*?>)?::)*(?:operator(?: co_await|\W+?)|~?\w+)(?:<[^()`]*?>)?)"
                  r"\s*(?:\((.*)\))?[\w\s&]*$")


def keys_of(qualified, names):
    """The keys a documented name stands for: with aliases resolved, and as written."""
    parts = [re.sub(r"<.*>", "", p) for p in re.split(r"::(?![^<]*>)", qualified)]
    if len(parts) == 1:
        return {parts[0], names.aliases.get(parts[0], parts[0])}
    scope = [names.aliases.get(p, p) for p in parts[:-1]]
    name = parts[-1]
    spellings = {scope[-1]} | {a for a, b in names.aliases.items() if b == scope[-1]}
    if name.lstrip("~") in spellings:  # a constructor or destructor, spelled with the alias
        name = ("~" if name.startswith("~") else "") + scope[-1]
    return {"::".join(scope + [name])}


def documented(path, names):
    """(key, arity or None, line number) of each code span in a heading of the document."""
    entries = []
    in_fence = False
    for number, line in enumerate(open(path), 1):
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence or not line.startswith("#"):
            continue
        for span in re.findall(r"`([^`]+)`", line):
            m = SPAN.match(span)
            if not m:
                continue
            arity = arity_of(m.group(2)) if m.group(2) is not None else None
            for key in keys_of(m.group(1), names):
                entries.append((key, arity, number))
    return entries


def main(root, list_names=False):
    try:
        names = public_names(root)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"SKIPPED: clang++ could not dump zap's AST ({e})")
        return 77
    known = names.names
    if list_names:
        for key in sorted(known):
            print(key, sorted(known[key].values()) if known[key] else "")
        return 0
    # A scan that saw too little must not pass: the classes every program uses.
    for must in ("BasicThreadPool::schedule", "BasicTaskGroup::run", "Config::max_threads", "ThreadPool"):
        if must not in known:
            print(f"the AST scan did not find {must}: the scan is broken")
            return 1
    doc = os.path.join(root, "docs", "api.md")
    entries = documented(doc, names)
    failures = []
    spans = {}
    for key, arity, number in entries:
        spans.setdefault(key, []).append((arity, number))
    for key in sorted(known):
        have = spans.get(key, [])
        if not have:
            failures.append(f"docs/api.md: no entry for {key}")
            continue
        arities = list(known[key].values())
        for arity in sorted(set(arities)):
            want, got = arities.count(arity), sum(1 for a, _ in have if a == arity)
            if got < want:
                failures.append(f"docs/api.md: {key}: {want} overload(s) with {arity} parameter(s), {got} documented")
    sources = "".join(open(os.path.join(root, "src", "zap", f)).read()
                      for f in os.listdir(os.path.join(root, "src", "zap")) if f.endswith(".hpp"))
    for key, arity, number in entries:
        scope = key.split("::")[0]
        if key in known:
            if arity is not None and known[key] and arity not in known[key].values():
                failures.append(f"docs/api.md:{number}: {key} has no overload with {arity} parameter(s)")
        elif scope not in known and re.search(rf"\b(struct|class)\s+{re.escape(scope)}\b", sources):
            continue  # a class only another system compiles (windows_platform.hpp)
        else:
            failures.append(f"docs/api.md:{number}: {key} is not a public name of <zap/zap.hpp>")
    for failure in failures:
        print(failure)
    print(f"{len(known)} public names, {len(entries)} entries in docs/api.md, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--list"]
    sys.exit(main(args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "--list" in sys.argv))
