# SPDX-License-Identifier: MIT
"""The figures of the design: the ring's four moves, the Sync word's bits
and states, and the shutdown/join timeline.

What the code defines is read from it: the Sync word's field widths and
shifts and the State values from src/zap/sync.hpp, the ring's production
capacity from src/zap/std_primitives.hpp. Every protocol label a figure
names (A3, B5, ...) must be defined in the header it cites, or the
generator fails: a renamed step cannot leave a figure behind."""

import re

from svg import Svg, text_width, wrap

# ---- reading the headers ---------------------------------------------------


def read(root, path):
    with open(f"{root}/{path}", encoding="utf-8") as f:
        return f.read()


def sync_layout(root):
    """The Sync word's fields (name, first bit, width) and State values, from sync.hpp."""
    text = read(root, "src/zap/sync.hpp")
    consts = {}
    for name, expr in re.findall(r"static constexpr std::uint32_t (\w+) = ([^;]+);", text):
        expr = expr.strip()
        if re.fullmatch(r"[\w\s+]+", expr):  # sums of names and numbers only
            consts[name] = sum(int(t) if t.isdigit() else consts[t] for t in re.findall(r"\w+", expr))
    states = {m[0]: int(m[1]) for m in re.findall(r"^\s+(\w+) = (\d+),", text, re.M)}
    width = consts["count_bits"]
    consts["max_count"] = (1 << width) - 1  # sync.hpp: (1u << count_bits) - 1
    fields = [("idle / closers", consts["idle_shift"], width), ("spawned", consts["spawned_shift"], width),
              ("unused", consts["unused_shift"], 1), ("notified", consts["notified_shift"], 1),
              ("state", consts["state_shift"], 32 - consts["state_shift"])]
    fields.sort(key=lambda f: f[1])
    at = 0
    for name, first, bits in fields:  # the fields tile the word
        if first != at:
            raise SystemExit(f"sync.hpp: field {name} starts at bit {first}, expected {at}")
        at = first + bits
    if at != 32:
        raise SystemExit(f"sync.hpp: the fields cover {at} bits, not 32")
    return fields, states, consts


def ring_capacity(root):
    m = re.search(r"ring_capacity = (\d+);", read(root, "src/zap/std_primitives.hpp"))
    return int(m.group(1))


def require_labels(root, header, labels):
    """Fails unless every label is defined (as a step or invariant) in the header's comment."""
    text = read(root, header)
    missing = [l for l in labels if not re.search(rf"(^//\s+|;\s+){re.escape(l)}[.(: ]", text, re.M)]
    if missing:
        raise SystemExit(f"figures: {header} defines no {', '.join(missing)}: update tools/figures/design.py")


# ---- the ring ---------------------------------------------------------------

SLOT_W, SLOT_H = 46, 34


def draw_ring(svg, x, y, cap, head, tail, tasks, title, marks=(), shade=None):
    """A ring of `cap` slots at (x, y): slot i holds tasks[index] for head <= index < tail.
    `marks`: (index, text, color) arrows under the slots; `shade`: {index: color}."""
    svg.text(x, y - 22, title, 12, "muted")
    for s in range(cap):
        svg.rect(x + s * SLOT_W, y, SLOT_W, SLOT_H, fill="panel", stroke="line", rx=0)
        svg.text(x + s * SLOT_W + SLOT_W / 2, y - 5, f"[{s}]", 10, "muted", "middle")
    for index in range(head, tail):
        s = index % cap
        color = (shade or {}).get(index, "blue")
        svg.rect(x + s * SLOT_W + 3, y + 3, SLOT_W - 6, SLOT_H - 6, fill=f"{color}_bg", stroke=color, rx=2)
        svg.text(x + s * SLOT_W + SLOT_W / 2, y + SLOT_H / 2 + 5, tasks.get(index, "?"), 13, color, "middle", "bold")
    for n, (index, label, color) in enumerate(marks):
        cx = x + (index % cap) * SLOT_W + (SLOT_W / 2 if label.startswith("head") else 0)
        if label.startswith("tail"):
            cx = x + (index % cap) * SLOT_W if index % cap else x + (cap if index > head else 0) * SLOT_W
        base = y + SLOT_H + 16 + 16 * n
        svg.line(cx, base, cx, y + SLOT_H + 2, color, 1.5, arrow=color)
        svg.text(cx + 4, base + 10, label, 11, color)


CAP = 8  # slots drawn; production rings have ring_capacity(root)


def tasks_from(first, last):
    """Tasks a, b, c, ... at indices first .. last - 1."""
    return {i: "abcdefghijklmnop"[i - first] for i in range(first, last)}


def ring_pair(title, heading, tasks, before, after, height):
    """A figure with the ring before and after a move. `before` and `after`:
    (head, tail, caption, shade); head and tail get their arrows."""
    svg = Svg(860, height, title)
    svg.text(20, 26, heading, 12, "ink", weight="bold")
    for x, (head, tail, caption, shade) in ((20, before), (450, after)):
        draw_ring(svg, x, 70, CAP, head, tail, tasks, caption,
                  [(head, f"head {head}", "ink"), (tail, f"tail {tail}", "blue")], shade)
    return svg


def ring_figure(root, name):
    require_labels(root, "src/zap/buffer.hpp", ["1.", "2.", "3.", "RB1", "RB2", "RB4", "RB5"])
    if name == "ring-push":
        svg = ring_pair("Ring step 1: push",
                        "push (buffer.hpp step 1): the owner writes slots, then publishes them with one release store of tail",
                        tasks_from(10, 15), (10, 13, "before: head 10, tail 13", None),
                        (10, 15, "after push(d, e)", {13: "green", 14: "green"}), 310)
        svg.lines(20, 200, [
            "head and tail are free-running 64-bit indices (RB1); slot = index % capacity.",
            "1. write d, e into slots [5], [6] (relaxed: a thief may read a slot it will not win)",
            "2. tail.store(15, release): a thief's acquire load of tail that reads 15 sees both slots",
            "Only the owner writes tail and the slots; a slot is overwritten only after an acquire of head",
            f"past the thieves' CASes that read it (RB5). Capacity {CAP} here; {ring_capacity(root)} in production (std_primitives.hpp).",
        ], 12, "muted")
    elif name == "ring-pop":
        svg = ring_pair("Ring step 2: pop",
                        "pop (step 2): the owner takes the oldest task with a CAS of head, racing the thieves (FIFO)",
                        tasks_from(10, 15), (10, 15, "before: head 10, tail 15", {10: "amber"}),
                        (11, 15, "after: head.CAS(10, 11) won, the owner runs a", None), 270)
        svg.lines(20, 200, [
            "head is the one index owner and thieves both move, always with a CAS, one slot at a time (RB2, RB4).",
            "The owner reads the slot after its CAS: only it writes slots, so the slot cannot change under it.",
        ], 12, "muted")
    elif name == "ring-steal-half":
        svg = ring_pair("Ring step 3: steal half",
                        "steal (step 3): a thief with an empty ring takes half of the victim's tasks, rounded up, one CAS each",
                        tasks_from(10, 15),
                        (10, 15, "victim before: 5 tasks, so the thief wants 5 - 5/2 = 3", {10: "amber", 11: "amber", 12: "amber"}),
                        (13, 15, "victim after three claims: head 13", None), 400)
        draw_ring(svg, 450, 210, CAP, 40, 42, {40: "a", 41: "b"}, "thief's ring after: a, b published (tail 42); c runs now",
                  [(40, "head 40", "ink"), (42, "tail 42", "blue")], {40: "green", 41: "green"})
        svg.rect(450 + 2 * SLOT_W + 3, 213, SLOT_W - 6, SLOT_H - 6, fill="amber_bg", stroke="amber", rx=2, dash=True)
        svg.text(450 + 2 * SLOT_W + SLOT_W / 2, 213 + SLOT_H / 2 + 2, "c", 13, "amber", "middle", "bold")
        svg.text(450 + 3 * SLOT_W + 6, 262, "c: not published; runs now", 11, "amber")
        svg.lines(20, 210, [
            "each claim: load victim head, then tail",
            "(seq_cst; the tail load acquires the slots),",
            "read slot[head], then head.CAS(h, h + 1):",
            "read before the CAS, since once head moves",
            "the owner may overwrite that slot (RB5).",
            "One task per CAS (RB4), so the owner's",
            "take-back (step 5) can race each claim.",
        ], 12, "muted")
        svg.lines(20, 340, [
            "Why half: the thief leaves the victim as much as it takes, so two workers that share work split it evenly",
            "in one steal instead of coming back for one task at a time; the stolen tasks sit in the thief's ring, where",
            "other thieves can take half again (Stole::more tells the pool to wake one more worker for them, A4).",
        ], 12, "muted")
    elif name == "ring-overflow":
        svg = ring_pair("Ring step 1, overflow: migrate half",
                        "overflow (step 1): a full ring moves half of itself, with one CAS of head, to the owner's overflow queue",
                        tasks_from(10, 18),
                        (10, 18, "before: full (tail - head == 8), pushing i", {10: "amber", 11: "amber", 12: "amber", 13: "amber"}),
                        (14, 18, "after head.CAS(10, 14) (acquire)", None), 330)
        svg.text(450, 200, "overflow queue (queue.hpp) gets one list:", 12, "muted")
        for n, t in enumerate("abcdi"):
            color = "green" if t == "i" else "amber"
            svg.rect(450 + n * 62, 212, 40, 28, fill=f"{color}_bg", stroke=color, rx=2)
            svg.text(450 + n * 62 + 20, 231, t, 13, color, "middle", "bold")
            if n < 4:
                svg.line(450 + n * 62 + 40, 226, 450 + n * 62 + 60, 226, "line", 1, arrow="line")
        svg.lines(20, 200, [
            "The CAS claims the 4 oldest tasks at once:",
            "only the owner migrates, and thieves' CASes",
            "on head simply fail and reload. The claimed",
            "tasks are linked, followed by those that did",
            "not fit, for one push to the overflow queue;",
            "the ring keeps the newest half.",
        ], 12, "muted")
        svg.text(20, 305, "Why half: the ring keeps its newest half for its owner and thieves, frees room for the next pushes, and one CAS moves the rest.", 11, "muted")
    else:
        raise KeyError(name)
    return svg


# ---- the Sync word ------------------------------------------------------------


def sync_word_figure(root):
    fields, states, consts = sync_layout(root)
    svg = Svg(900, 330, "The Sync word")
    svg.text(20, 26, "Sync (src/zap/sync.hpp): all of the pool's sleep/wake bookkeeping in one 32-bit word, moved by one CAS", 12, "ink", weight="bold")
    bit_w, x0, y0 = 26, 20, 70
    colors = {"idle / closers": "blue", "spawned": "green", "unused": "faint", "notified": "amber", "state": "purple"}
    for bit in range(32):  # bit 31 on the left
        x = x0 + (31 - bit) * bit_w
        svg.text(x + bit_w / 2, y0 - 6, str(bit), 11, "muted", "middle")
    for name, first, bits in fields:
        x = x0 + (31 - (first + bits - 1)) * bit_w
        c = colors[name]
        svg.rect(x, y0, bits * bit_w, 40, fill=f"{c}_bg" if c != "faint" else "panel", stroke=c if c != "faint" else "line", rx=0)
        label = name if text_width(name, 12) < bits * bit_w - 4 else name.split()[0][:1]
        svg.text(x + bits * bit_w / 2, y0 + 25, label, 12, c if c != "faint" else "muted", "middle", "bold")
        span = f"{first}" if bits == 1 else f"{first}..{first + bits - 1}"
        svg.text(x + bits * bit_w / 2, y0 + 56, span, 11, "muted", "middle")
    state_names = ", ".join(f"{v} {k}" for k, v in sorted(states.items(), key=lambda kv: kv[1]))
    svg.lines(20, 160, [
        f"state     {state_names}: who is on the way to look for work (figure sync-states)",
        "notified  work was published since a worker last consumed a notification: someone must look again",
        f"spawned   worker threads reserved or running (at most {consts['max_count']}: {consts['count_bits']} bits)",
        "idle      before shutdown: workers counted idle (about to sleep on the idle event)",
        "closers   after shutdown, the same bits: threads that may let join() return and still have",
        "          event calls to make (pool_core.hpp P5); join() waits until they are 0",
    ], 12, "ink")
    example = (2 << consts["state_shift"]) | (1 << consts["notified_shift"]) | (3 << consts["spawned_shift"]) | 1
    svg.text(20, 280, f"Example: state waking, notified, spawned 3, idle 1 = 0x{example:08x}. The all-zero word is the initial state:", 12, "muted")
    svg.text(20, 298, "pending, nobody notified, no worker, nobody idle. One fetch_sub of 1 << spawned_shift unregisters a worker.", 12, "muted")
    return svg


def sync_states_dot(root):
    """The state machine of Sync's state field, as graphviz source."""
    _, states, _ = sync_layout(root)
    steps = ["A3.", "A4.", "A5.", "A7.", "A8.", "B1."]
    require_labels(root, "src/zap/pool_core.hpp", steps)
    if sorted(states) != ["pending", "shutdown", "signaled", "waking"]:
        raise SystemExit(f"sync.hpp: states are {sorted(states)}: update tools/figures/design.py")
    edges = [
        ("pending", "signaled", "A3 notify_slow: wake an idle worker\\n(idle > 0) or spawn one; sets notified"),
        ("signaled", "waking", "A5 wait(): the first worker to\\nconsume the notification"),
        ("waking", "signaled", "A4/A3 the waker hands its role on:\\nwork left, someone idle or spawnable"),
        ("waking", "pending", "A3 give-back (no work left),\\nA5 the waker counts itself idle,\\nA8 the spin runs out"),
        ("pending", "waking", "A8 an idle worker takes the\\nrole to spin (CAS, relaxed)"),
        ("signaled", "pending", "A7 the spawn failed:\\nits signal is reset"),
    ]
    out = ["// SPDX-License-Identifier: MIT",
           "// Generated by tools/figures/generate from src/zap/sync.hpp and pool_core.hpp; do not edit.",
           "digraph sync_states {",
           '  graph [rankdir=LR, fontname="DejaVu Sans Mono", fontsize=12, nodesep=0.7, ranksep=1.2,'
           ' label="Sync.state (sync.hpp): at most one worker is signaled or waking (P1); shutdown is terminal", labelloc=t];',
           '  node [shape=box, style="rounded,filled", fontname="DejaVu Sans Mono", fontsize=12, fillcolor="#fbefff", color="#8250df"];',
           '  edge [fontname="DejaVu Sans Mono", fontsize=10, color="#57606a", fontcolor="#1b1f24"];']
    for name, value in sorted(states.items(), key=lambda kv: kv[1]):
        extra = ', peripheries=2, fillcolor="#ffebe9", color="#cf222e"' if name == "shutdown" else ""
        out.append(f'  {name} [label="{name} ({value})"{extra}];')
    for a, b, label in edges:
        out.append(f'  {a} -> {b} [label="{label}"];')
    out.append('  any [shape=plaintext, style="", label="any state"];')
    out.append('  any -> shutdown [label="B1 shutdown(): one CAS (acq_rel),\\nnotified set; idle bits become closers", color="#cf222e"];')
    out.append('  note [shape=note, style=filled, fillcolor="#fff8c5", color="#9a6700", fontsize=10, label="notified: set by A3 (any notify that is not a give-back);\\l'
               'cleared by A5 (a worker consumes it, then a seq_cst fence)\\l'
               'and by A7 when no worker is left to consume it\\l"];')
    out.append("}")
    return "\n".join(out) + "\n"


# ---- shutdown and join -----------------------------------------------------------


def shutdown_join_figure(root):
    require_labels(root, "src/zap/pool_core.hpp", ["B1.", "B2.", "B3.", "B4.", "B5.", "B6.", "B7.", "P3", "P5"])
    lanes = ["thread T: ~ThreadPool()", "worker w1 (running)", "worker w2 (asleep)", "thread U: join()"]
    lane_h, x0, left = 74, 190, 20
    svg = Svg(1240, 100 + lane_h * len(lanes) + 140, "Shutdown and join")
    svg.text(left, 26, "shutdown() and join() (pool_core.hpp Protocol B): who waits for whom before the pool may be freed", 12, "ink", weight="bold")
    svg.text(left, 44, "time runs to the right; boxes are steps; arrows are wake-ups (futex) and the touches another thread waits for", 11, "muted")
    ys = {}
    for i, lane in enumerate(lanes):
        y = 70 + i * lane_h
        ys[lane] = y
        svg.text(left, y + 22, lane, 12, "ink", weight="bold")
        svg.line(x0, y + 18, 1225, y + 18, "faint", 1)

    def box(lane, x, w, label, color, sub):
        y = ys[lane]
        svg.rect(x, y, w, 38, fill=f"{color}_bg", stroke=color)
        svg.text(x + 6, y + 15, label, 11, color, weight="bold")
        svg.text(x + 6, y + 30, sub, 10, "ink")

    def arrow(lane_a, xa, lane_b, xb, color, label=None):
        down = ys[lane_b] > ys[lane_a]
        ya = ys[lane_a] + (38 if down else 0)
        yb = ys[lane_b] + (0 if down else 38)
        svg.line(xa, ya, xb, yb, color, 1.3, arrow=color)
        if label:
            svg.text((xa + xb) / 2 + 6, (ya + yb) / 2, label, 10, color)

    T, W1, W2, U = lanes
    box(T, 190, 170, "B1 CAS: shutdown,", "purple", "notified, 1 closer")
    box(T, 365, 150, "idle_event", "purple", ".shutdown()")
    box(T, 520, 110, "B1 release", "purple", "closer (P5)")
    box(T, 635, 110, "B4 claim:", "amber", "exchange wins")
    box(T, 750, 200, "B5 wait on the join event", "amber", "until shutdown, spawned 0")
    box(T, 955, 90, "B5 closers", "amber", "0; drain")
    box(T, 1050, 80, "B6 join", "amber", "w1, w2")
    box(T, 1135, 95, "B7 calls_ 0", "red", "then free (P3)")
    box(W1, 190, 230, "runs a task scheduled", "blue", "before shutdown()")
    box(W1, 640, 150, "B2 sweep: runs", "blue", "what is left")
    box(W1, 800, 150, "B3 fetch_sub: 1 -> 0", "green", "last: join_event")
    box(W1, 955, 70, "exits", "muted", "")
    box(W2, 190, 260, "counted idle, asleep on the idle event", "muted", "")
    box(W2, 460, 140, "woken: B2 sweep", "blue", "finds nothing")
    box(W2, 605, 150, "B3 fetch_sub: 2 -> 1", "green", "not the last")
    box(W2, 760, 60, "exits", "muted", "")
    box(U, 660, 160, "B4 claim lost:", "amber", "joined_.wait()")
    box(U, 1050, 80, "wakes:", "amber", "returns")
    arrow(T, 440, W2, 475, "red", "wake all")
    arrow(W1, 930, T, 935, "red", "notify")
    arrow(T, 1090, U, 1090, "amber", "done()")
    arrow(U, 1125, T, 1160, "amber", "calls_ - 1")
    y = 100 + lane_h * len(lanes)
    svg.lines(left, y, [
        "B1  one CAS makes shutdown final: nothing is woken or spawned any more; no worker counts itself idle, so the idle",
        "    bits count closers: threads that may let join() return and still have event calls to make (P5).",
        "B2  a worker that sees shutdown sweeps before it leaves: every task scheduled before shutdown() runs (P2).",
        "B3  leaving is a release fetch_sub of spawned; the one that takes it to 0 notifies the join event.",
        "B5  join() acquires Sync through the release sequence B1's CAS heads and the workers' fetch_subs continue, waits",
        "    for the closers, and runs what is left; B6 joins every OS thread: no worker is still in its last futex call.",
        "B4/B7  one join() claims, the others wait for it; the destructor waits until every call has stopped touching the pool.",
    ], 11, "muted")
    return svg


DESIGN = {
    "ring-push": lambda root: ring_figure(root, "ring-push"),
    "ring-pop": lambda root: ring_figure(root, "ring-pop"),
    "ring-steal-half": lambda root: ring_figure(root, "ring-steal-half"),
    "ring-overflow": lambda root: ring_figure(root, "ring-overflow"),
    "sync-word": sync_word_figure,
    "shutdown-join": shutdown_join_figure,
}
DOT = {"sync-states": sync_states_dot}
