# SPDX-License-Identifier: MIT
"""A checker's counterexample (docs/figures/traces/*.json) drawn as a
sequence diagram: one column per thread, one row per step in the order the
checker ran them.

A trace has: title, source (the command that reproduces it), verdict,
threads [{key, label}], events [{thread, step, text, result, stale,
missed, state}], end (the outcome), caption (lines). `stale`: a load that
read an older value than the newest store (Relacy's [NOT CURRENT], GenMC's
read-from edge to an overwritten write); `missed`: the index of the event
whose write it did not see, drawn as a dashed red arrow; `state`: a
variable change shown under the step (TLC)."""

from svg import Svg, text_width, wrap

ROW, TOP, MARGIN, GAP = 40, 96, 20, 24


def render(trace):
    active = {e["thread"] for e in trace["events"]}
    threads = [t["key"] for t in trace["threads"] if t["key"] in active]
    labels = {t["key"]: t["label"] for t in trace["threads"]}
    events = trace["events"]
    # Column widths: the widest text of the column, its header, at least 200.
    width = {}
    for key in threads:
        cells = [labels[key]] + [e["text"] for e in events if e["thread"] == key] + \
                [e.get("result", "") for e in events if e["thread"] == key] + \
                [e.get("state", "") for e in events if e["thread"] == key]
        width[key] = max(200, max(text_width(c, 11) for c in cells) + 20)
    graph = bool(events) and all("row" in e for e in events)
    gap = 160 if graph else GAP  # room for the crossing arrows of a graph
    x = {}
    at = MARGIN + (10 if graph else 44)
    for key in threads:
        x[key] = at
        at += width[key] + gap
    at = max(at - gap + GAP, text_width(trace["title"], 13) + 2 * MARGIN)
    rows = [ROW + (14 if e.get("state") else 0) for e in events]
    y, ys = TOP, []
    if graph:  # program-order positions side by side
        height = max(rows) + 8
        ys = [TOP + e["row"] * height for e in events]
        y = TOP + (max(e["row"] for e in events) + 1) * height
    else:
        for r in rows:
            ys.append(y)
            y += r
    chars = max(90, int((at - 2 * MARGIN) / 7))
    caption = [line for c in trace.get("caption", []) for line in wrap(c, chars)]
    end = wrap(trace["end"], int(chars * 0.9))
    height = y + 44 + 18 * len(end) + 16 * len(caption)
    svg = Svg(max(at, 20 + 7 * chars), height, trace["title"])
    svg.text(MARGIN, 26, trace["title"], 13, "ink", weight="bold")
    svg.text(MARGIN, 44, f"{trace['checker']}: {trace['source']}", 11, "muted")
    svg.text(MARGIN, 60, f"verdict: {trace['verdict']}", 11, "red")
    for key in threads:
        svg.rect(x[key], TOP - 30, width[key], 22, fill="panel", stroke="line")
        svg.text(x[key] + width[key] / 2, TOP - 15, labels[key], 11, "ink", "middle", "bold")
        svg.line(x[key] + width[key] / 2, TOP - 8, x[key] + width[key] / 2, y, "faint", 1, dash=True)
    for i, e in enumerate(events):
        key, top = e["thread"], ys[i]
        stale = e.get("stale", False)
        color = "red" if stale else ("purple" if e.get("kind") == "fence" else "blue")
        if e.get("kind") == "end":
            color = "red"
        h = rows[i] - 8
        svg.rect(x[key] + 4, top, width[key] - 8, h, fill=f"{color}_bg", stroke=color)
        if "row" not in e:
            svg.text(MARGIN, top + 15, str(e.get("step", "")), 10, "muted")
        else:
            svg.text(x[key] + width[key] - 10, top + 14, str(e.get("step", "")), 10, "muted", "end")
        svg.text(x[key] + 10, top + 14, e["text"], 11, "ink")
        if e.get("result"):
            again = f"  (x{e['repeats']})" if e.get("repeats") else ""
            svg.text(x[key] + 10, top + 27, e["result"] + again, 11, color, weight="bold" if stale else "normal")
        if e.get("state"):
            svg.text(x[key] + 10, top + 41, e["state"], 10, "muted")
    for i, e in enumerate(events):
        m = e.get("missed")
        if m is None or events[m]["thread"] == e["thread"]:
            continue
        src, dst = events[m]["thread"], e["thread"]
        right = x[dst] > x[src]  # from the write's box edge to the read's facing edge
        x1 = x[src] + (width[src] - 4 if right else 4)
        x2 = x[dst] + (4 if right else width[dst] - 4)
        y1, y2 = ys[m] + (rows[m] - 8) / 2, ys[i] + (rows[i] - 8) / 2
        svg.line(x1, y1, x2, y2, "red", 1.2, dash=True, arrow="red")
        lx, ly = x1 + (x2 - x1) * 0.08, y1 + (y2 - y1) * 0.08
        svg.text(lx, ly - 6, "not seen", 10, "red", "start" if right else "end")
    after = svg.lines(MARGIN, y + 20, end, 12, "red", leading=18, weight="bold")
    svg.lines(MARGIN, after + 6, caption, 11, "muted")
    return svg
