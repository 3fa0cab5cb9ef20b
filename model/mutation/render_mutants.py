# SPDX-License-Identifier: MIT
"""docs/mutants.md from the logic mutants, their recorded verdicts
(logic_results.json) and the analyses of survivors (logic_analysis.json).
Pure function of its inputs: model/mutate-logic --ci checks that the
committed document is what this renders."""

import os


def _rate(k, n):
    return f"{100.0 * k / n:.1f}%" if n else "-"


# Headers that the native builds do not compile: until a cross build's run
# (model/mutate-logic --run --build-dir on a MinGW-w64 build with
# ZAP_MUTANT_CHECKS, its checks under Wine) records them, their mutants are
# listed and left out of the rates.
OTHER_PLATFORM = {"windows_platform.hpp": "compiled only for Windows: run by the MinGW-w64 build's "
                                          "twins under Wine, not by the native run"}


def classify(m, results, analysis):
    """verdict shown: killed, killed by a new check, equivalent, survived,
    unreached, no verdict, other platform, not run."""
    r = results.get("mutants", {}).get(m["id"])
    a = analysis.get(m["id"], {})
    if r is None:
        return ("other platform" if m["file"] in OTHER_PLATFORM else "not run"), None, a
    v = r["verdict"]
    if v != "killed" and a.get("equivalent"):
        return "equivalent", r, a
    # A new check's kill: recorded by a re-run (the table names the check) or
    # only in the analysis (a run that the harness could not make).
    if a.get("killed_by") and (v != "killed" or r.get("check") == a["killed_by"]):
        return "killed by a new check", r, a
    if v == "survived" and r.get("no_verdict"):
        return "no verdict", r, a
    return v, r, a


def document(root, mutants, results, analysis, intro_path):
    out = []
    intro = open(intro_path).read() if os.path.exists(intro_path) else ""
    out.append(intro.rstrip() + "\n")
    last = results.get("last_run")
    if last:
        out.append(f"\nLast run: `model/mutate-logic {last['argv']}` on {last['date']}: {last['mutants']} mutants "
                   f"in {last['seconds']} s (coverage pass {last.get('coverage_seconds', '?')} s, "
                   f"{last['checks']} checks; load average at its end {last.get('load_average_at_end', '?')}).\n")
    # ---- per header
    files = sorted({m["file"] for m in mutants})
    rows = []
    tot = {"all": 0, "run": 0, "killed": 0, "new check": 0, "equivalent": 0, "survived": 0, "unreached": 0,
           "no verdict": 0}
    per = {}
    for m in mutants:
        v, r, a = classify(m, results, analysis)
        p = per.setdefault(m["file"], dict.fromkeys(tot, 0))
        for d in (p, tot):
            d["all"] += 1
            if v in ("not run", "other platform"):
                continue
            d["run"] += 1
            d[{"killed by a new check": "new check"}.get(v, v)] += 1
    out.append("\n## Kill rate per header\n\n")
    out.append("Rate: (killed + killed by a new check) / (run - equivalent). A survivor, an unreached mutant "
               "and one that no check gave a verdict on all count against it. "
               + " ".join(f"{f}: {why}." for f, why in OTHER_PLATFORM.items()) + "\n\n")
    out.append("| header | mutants | run | killed | by a new check | equivalent | survived | unreached | no verdict "
               "| kill rate |\n")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")

    def rate(p):
        return _rate(p["killed"] + p["new check"], p["run"] - p["equivalent"])

    for f in files:
        p = per[f]
        out.append(f"| {f} | {p['all']} | {p['run']} | {p['killed']} | {p['new check']} | {p['equivalent']} | "
                   f"{p['survived']} | {p['unreached']} | {p['no verdict']} | {rate(p)} |\n")
    out.append(f"| **all** | {tot['all']} | {tot['run']} | {tot['killed']} | {tot['new check']} | {tot['equivalent']} | "
               f"{tot['survived']} | {tot['unreached']} | {tot['no verdict']} | **{rate(tot)}** |\n")
    # ---- per operator
    ops = {}
    for m in mutants:
        v, r, a = classify(m, results, analysis)
        o = ops.setdefault(m["op"], {"all": 0, "run": 0, "killed": 0, "equivalent": 0})
        o["all"] += 1
        if v not in ("not run", "other platform"):
            o["run"] += 1
        if v in ("killed", "equivalent"):
            o[v] += 1
        elif v == "killed by a new check":
            o["killed"] += 1
    out.append("\n## Per operator\n\n| operator | mutants | run | killed | equivalent | kill rate |\n|---|---:|---:|---:|---:|---:|\n")
    for op in sorted(ops):
        o = ops[op]
        out.append(f"| {op} | {o['all']} | {o['run']} | {o['killed']} | {o['equivalent']} | "
                   f"{_rate(o['killed'], o['run'] - o['equivalent'])} |\n")
    # ---- which checks killed
    firsts = {}
    for m in mutants:
        v, r, a = classify(m, results, analysis)
        if v == "killed":
            label = r["check"].split(".")[0]
            firsts[label] = firsts.get(label, 0) + 1
    if firsts:
        out.append("\n## First killing check, by kind\n\n| kind | mutants |\n|---|---:|\n")
        for k in sorted(firsts, key=lambda k: -firsts[k]):
            out.append(f"| {k} | {firsts[k]} |\n")
    # ---- survivors and their dispositions
    out.append("\n## Survivors and their dispositions\n\n")
    any_s = False
    for m in mutants:
        v, r, a = classify(m, results, analysis)
        if v in ("killed", "not run", "other platform"):
            continue
        any_s = True
        out.append(f"- `{m['short']}` {m['file']}:{m['line']} `{m['function']}` {m['op']}"
                   + (f" ({m['detail']})" if m["detail"] else "") + f": `{_cut(m['text'], 90)}` - **{v}**")
        if a.get("equivalent"):
            out.append(f". Equivalent: {a['analysis']}\n")
        elif a.get("killed_by"):
            out.append(f". Killed by the new check `{a['killed_by']}`: {a.get('analysis', '')}\n")
        elif a.get("analysis"):
            out.append(f". {a['analysis']}\n")
        else:
            out.append(". Not yet accounted for.\n")
    if not any_s:
        out.append("None among the mutants run.\n")
    # ---- every mutant
    out.append("\n## Every mutant\n\n")
    out.append("| id | line | function | operator | change | verdict | first check that killed it |\n")
    out.append("|---|---:|---|---|---|---|---|\n")
    for f in files:
        for m in mutants:
            if m["file"] != f:
                continue
            v, r, a = classify(m, results, analysis)
            killer = (f"`{r['check']}` ({r['how']})" if v == "killed" else
                      f"`{a['killed_by']}` (new)" if v == "killed by a new check" else "")
            change = _cut(m["text"], 60) + (f" [{m['detail']}]" if m["detail"] else "")
            out.append(f"| `{m['short']}` | {f}:{m['line']} | {m['function']} | {m['op']} | `{_esc(change)}` | "
                       f"{v} | {_esc(killer)} |\n")
    return "".join(out)


def _cut(s, n):
    return s if len(s) <= n else s[:n - 3] + "..."


def _esc(s):
    return s.replace("|", "\\|")
