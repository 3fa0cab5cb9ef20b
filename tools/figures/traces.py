# SPDX-License-Identifier: MIT
"""The counterexamples the docs teach, taken from the checkers' own output.

Each SPEC names a checker run (a TLA+ configuration, a Relacy model binary
and its arguments, a GenMC test), the threads to draw and how to label
them. run() executes it, abridges the output to the steps worth drawing
(extract_*) and writes or compares docs/figures/traces/NAME.json. The
abridged trace keeps what the checker found - which thread did what, with
which memory order, reading which value, whether it read an older value -
and drops what changes with every build (addresses, line numbers), so a
comparison fails only when the counterexample itself changed."""

import json
import os
import re
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SPECS = {
    "notify-genmc": {
        "kind": "genmc",
        "title": "notify() against wait() without fences, as GenMC draws it",
        "file": "model/litmus/genmc_litmus.cpp",
        "test": "notify_no_fences",
        "model": "rc11",
        "expect": "assert",
        "locations": ["queue", "notified"],
        "source": "model/litmus/run notify_no_fences --genmc rc11 --graph notify.svg",
        "threads": {"1": "producer: push, then notify()'s load", "2": "worker: wait()'s CAS, then search"},
        "end": "outcome: notify() read `notified` set and returned; the worker that cleared it read an empty queue",
        "caption": [
            "The store-buffering shape with the pool's operations (docs/seed-defects.md D7): the producer's "
            "push, then its load of `notified`; the worker's CAS that clears `notified`, then its load of the "
            "queue. Each load reads a value that the other thread's write overwrites. zap puts a seq_cst fence "
            "after the push and after the CAS (pool_core.hpp A2, A5); GenMC then finds no such graph "
            "(notify_fences), and with only one of them seq_cst it still does (notify_acq_rel_fence).",
        ],
    },
    "sb-genmc": {
        "kind": "genmc",
        "title": "Store buffering as GenMC draws it: each load reads the initial value, not the other's store",
        "file": "model/litmus/genmc_litmus.cpp",
        "test": "sb_relaxed",
        "model": "rc11",
        "expect": "assert",
        "locations": ["x", "y"],
        "source": "model/litmus/run sb_relaxed --genmc rc11 --graph sb.svg",
        "threads": {"1": "thread 0", "2": "thread 1"},
        "end": "outcome r0 == 0 && r1 == 0: both stores happened, and neither load saw the other thread's",
        "caption": [
            "GenMC's error graph, abridged to the litmus's own events (its full graph also draws the harness). "
            "Each read names the write it reads from (rf); a dashed arrow is a write that is later in that "
            "location's coherence order than the one read: the read missed it. RC11 allows the cycle "
            "W x; R y -> init, W y; R x -> init because nothing orders a thread's store before its later load "
            "of another location: not relaxed, not release/acquire (sb_release_acquire), not acq_rel fences. "
            "A seq_cst fence on each side (sb_seq_cst_fences) puts the two threads in one total order and "
            "GenMC finds no such graph.",
        ],
    },
    "sb-litmus": {
        "kind": "relacy",
        "title": "Store buffering behind notify()'s fence: the seed's notify()/wait() without fences",
        "binary": "model/litmus/zap_model_litmus",
        "args": ["notify_no_fences", "--sched", "full", "--expect", "assert"],
        "source": "model/litmus/run notify_no_fences",
        "threads": {"0": "producer: push, then notify()", "1": "worker: wait(), then search"},
        "end": "outcome r0 == 1, r1 == 0: notify() returned (someone is notified), the worker found nothing",
        "caption": [
            "Each thread writes one location and then reads the other. Without a seq_cst fence between "
            "the write and the read on both sides, both reads may return the old value: the producer "
            "sees `notified` still set and leaves the task to the worker, the worker that just cleared "
            "`notified` finds the queue empty and goes to sleep. With zap's fences (pool_core.hpp A2, A5; "
            "variant notify_fences) Relacy's full search finds no such execution.",
        ],
    },
    "sb-pool": {
        "kind": "relacy",
        "title": "The same race in the pool: notify()'s seq_cst fence weakened to acq_rel",
        "binary": "model/mutation/zap_model_mutation",
        "args": ["handover_push", "--sched", "random", "--iterations", "100000", "--expect", "deadlock"],
        "mutate": ("src/zap/pool_core.hpp", "Platform::fence(std::memory_order_seq_cst);", 1, "acq_rel"),
        "source": "ZAP_MUTATE=src/zap/pool_core.hpp:<A2's fence>=acq_rel zap_model_mutation handover_push",
        "threads": {"0": "client: schedule(A1, A2), then B; wait", "1": "worker W2", "2": "worker W1"},
        "keep": r"load_sync|cas_sync|fence|Queue::push|blocking|DEADLOCK|NOT CURRENT|tail_\.store",
        "end": "DEADLOCK: B is queued and every worker sleeps",
        "caption": [
            "Only the steps on the Sync word, the global queue, the rings' tails and the fences are drawn "
            "(Relacy's full history has every step). W1 took A1 and A2 and handed the waking role on; W2's "
            "wait() cleared `notified` and fenced; the client pushed B and, with only an acq_rel fence, read "
            "`notified` from before W2's clear, so it returned; W2's search read the queue from before the push.",
        ],
    },
    "lost-wakeup": {
        "kind": "relacy",
        "title": "A lost wake-up: unpark() that does nothing unless the owner is parked",
        "binary": "model/zap_model_schemata",
        "seed": "parker-unpark-only-parked",
        "args": ["parker_unpark", "--bound", "1", "--expect", "deadlock"],
        "source": "ZAP_MUTANT=seed:parker-unpark-only-parked zap_model_schemata parker_unpark --bound 1 (model/seed/parker-unpark-only-parked.patch)",
        "threads": {"0": "waker: data = 1; unpark()", "1": "owner: park()"},
        "values": {"state_": {"0": "EMPTY", "1": "NOTIFIED", "4294967295": "PARKED"}},
        "end": "DEADLOCK: the owner sleeps, and the unpark that was meant for it is gone",
        "caption": [
            "The seed's rule taken literally: unpark() changes the word only when it reads PARKED. Here it "
            "runs before the owner has parked: it reads EMPTY and does nothing. The owner then finds no token, "
            "announces itself (EMPTY -> PARKED) and sleeps, and nobody will unpark it again. zap's unpark() "
            "always writes NOTIFIED, so an unpark that comes first is a token the next park() takes "
            "(parker.hpp; docs/parker.md).",
        ],
    },
    "shutdown-uaf-relacy": {
        "kind": "relacy",
        "title": "Use after free at shutdown: join() returns before the last worker's last touch",
        "binary": "model/zap_model_schemata",
        "seed": "join-no-thread-join",
        "args": ["pool_1w_1t_late_join", "--sched", "random", "--iterations", "100000", "--expect", "freed"],
        "source": "ZAP_MUTANT=seed:join-no-thread-join zap_model_schemata pool_1w_1t_late_join (model/seed/join-no-thread-join.patch)",
        "threads": {"0": "client: schedule, shutdown(), join(), delete", "1": "the pool's one worker"},
        "keep": r"unregister|wait_until_joinable|Event::post|deallocation|freed|FREED|PoolCore::shutdown",
        "values": {"state_": {"0": "EMPTY", "1": "WAITING", "2": "NOTIFIED", "3": "SHUTDOWN"}},
        "end": "ACCESS TO FREED MEMORY: the worker's join_event_.notify() runs on the deleted pool",
        "caption": [
            "The seed's join() returns once it reads spawned == 0; the worker that made it 0 still has to "
            "notify the join event. zap's join() joins every worker's OS thread first (B6), so that call "
            "has returned before the pool can be freed (P3).",
        ],
    },
    "shutdown-uaf-tlc": {
        "kind": "tla",
        "title": "The seed's shutdown/join, as TLC finds it: the pool is touched after join() returned",
        "config": "MCSeedPoolSafety",
        "source": "tla/run.sh MCSeedPoolSafety (Seed = TRUE)",
        "threads": {"main": "main: schedule, shutdown(), join()", "w1": "worker w1"},
        "show": ["sync", "ev", "queued", "ran"],
        "end": "Invariant PoolSafety is violated: join() returned (the pool may be freed) and w1 is still to swap the pool's join event",
        "caption": [
            "Each row is one step of tla/Pool.tla with the thread's program counter before and after "
            "(docs/protocol.md section 2 maps the labels to the code) and the variables it changed. "
            "docs/seed-defects.md TS4 tells the same trace in words.",
        ],
    },
    "lost-wakeup-tlc": {
        "kind": "tla",
        "title": "A signal that wakes nobody: notify() marks a worker signaled but never calls the idle event",
        "config": "MCMutNoWake",
        "source": "tla/run.sh MCMutNoWake (Mutation = \"nowake\")",
        "threads": {"main": "main: schedules two tasks", "w1": "worker w1", "w2": "worker w2"},
        "show": ["sync", "ev", "queued", "ran"],
        "end": "Temporal property SleeperWoken is violated: a task is queued, a worker sleeps, and nobody will wake it",
        "caption": [
            "In the lasso the one worker spawned (w2) only ever wakes spuriously and sleeps again (the model gives spurious wake-ups "
            "no fairness, so no property may rely on one). The Sync word says a worker is signaled, so every "
            "later notify() stops at `notified` (A2) or finds a waker on its way (A3): the one call that would "
            "wake the sleeper, idle_event_.notify(), is the one this mutation removes.",
        ],
    },
}

# ---- running a checker ---------------------------------------------------------


def tlc_command(tmp):
    """TLC, with Java's temporary directory in `tmp`: TLC writes the standard
    modules it parses there, and another TLC at once (tla/run.sh under ctest
    -j2) must not read a half-written copy."""
    jar = os.environ.get("TLA2TOOLS_JAR") or "/opt/tla/tla2tools.jar"
    if os.path.isfile(jar) and shutil.which("java"):
        return ["java", "-XX:+UseParallelGC", "-Djava.io.tmpdir=" + tmp, "-cp", jar, "tlc2.TLC"]
    if shutil.which("tlc"):
        return ["tlc"]
    return None


def zap_line(path, text, nth):
    """The line of src/PATH holding TEXT, the nth time (cmake/zap_line.cmake's rule)."""
    seen = 0
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if text in line:
                seen += 1
                if seen == nth:
                    return number
    raise SystemExit(f"figures: no line with '{text}' in {path}")


def run_checker(spec, build_dir, tmp):
    """The checker's output, or None when the checker (or its binary) is missing."""
    if spec["kind"] == "tla":
        tlc = tlc_command(tmp)
        if tlc is None:
            return None
        # One worker and a fixed seed and fingerprint: the same trace every
        # time. Temporal properties are checked once, on the whole graph
        # (-lncheck final): TLC otherwise checks them at intervals of wall
        # time, so on a loaded machine it found another lasso first.
        cmd = tlc + ["-workers", "1", "-seed", "1", "-fp", "1", "-lncheck", "final", "-cleanup",
                     "-metadir", os.path.join(tmp, "meta-" + spec["config"]),
                     "-config", spec["config"] + ".cfg", "Pool.tla"]
        r = subprocess.run(cmd, cwd=os.path.join(ROOT, "tla"), capture_output=True, text=True)
        return r.stdout + r.stderr
    if spec["kind"] == "genmc":
        dot = os.path.join(tmp, spec["test"] + ".dot")
        r = subprocess.run([os.path.join(ROOT, "model", "genmc", "run"), "--model", spec["model"], "--expect",
                            spec["expect"], "--dump", dot, os.path.join(ROOT, spec["file"]), spec["test"]],
                           capture_output=True, text=True)
        if r.returncode == 77:
            return None
        if r.returncode != 0 or not os.path.exists(dot):
            raise SystemExit(f"figures: GenMC did not give the expected verdict:\n{r.stdout[-3000:]}")
        return r.stdout, open(dot, encoding="utf-8").read()
    binary = os.path.join(build_dir, spec["binary"])
    if not os.path.isfile(binary):
        return None
    env = dict(os.environ)
    env.pop("ZAP_MUTATE", None)
    env.pop("ZAP_MUTANT", None)
    if "seed" in spec:  # a seed behaviour of the schemata build (model/mutation/schemata.cmake)
        env["ZAP_MUTANT"] = "seed:" + spec["seed"]
    if "mutate" in spec:
        path, text, nth, order = spec["mutate"]
        env["ZAP_MUTATE"] = f"{path}:{zap_line(path, text, nth)}={order}"
    r = subprocess.run([binary] + spec["args"], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise SystemExit(f"figures: {spec['binary']} did not give the expected verdict:\n{r.stdout[-3000:]}")
    return r.stdout


# ---- Relacy histories ---------------------------------------------------------------

HISTORY_LINE = re.compile(r"^\[(\d+)\] (\d+): (.*)$")
WHERE = re.compile(r"^(.*), in (.*), (\S+)\((\d+)\)$")


def source_line(path, line, seed=None):
    """The statement at path:line, if the file is in this repository. A
    header of a build's schemata tree (model/mutation/schemata.cmake) keeps
    src/'s line numbers with #line directives, and wraps each statement in
    run-time switches a reader should not see: its line is read in src/,
    unless it lies in the patched branch of `seed`, the seed the run had on."""
    if not path.startswith(ROOT + "/"):
        return None
    twin = re.search(r"/schemata/(src/zap/[^/]+)$", path)
    if twin:
        patched = seed_branch_line(path, int(line), seed)
        if patched is not None:
            return patched
        path = os.path.join(ROOT, twin.group(1))
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    return lines[int(line) - 1].strip() if int(line) <= len(lines) else None


def seed_branch_line(path, line, seed):
    """In a schemata header, the text at src/ line `line` of the patched
    branch of switch `seed` (`if (ZAP_MUTANT_ON(seed)) { #line N ... } else
    { #line N ... }`), or None when no such branch holds that line."""
    if seed is None:
        return None
    logical, branch = 1, None
    with open(path, encoding="utf-8") as f:
        for text in f:
            directive = re.match(r"#line (\d+)", text)
            opened = re.match(r"if \(ZAP_MUTANT_ON\((\d+)\)\) \{$", text.strip())
            if directive:
                logical = int(directive.group(1))
                continue
            if opened:
                branch = int(opened.group(1))
            elif text.strip() == "} else {":
                branch = None
            elif branch == seed and logical == line:
                return text.strip()
            logical += 1
    return None


def seed_switch(spec, build_dir):
    """The schemata switch of the seed a spec runs with, or None."""
    if "seed" not in spec:
        return None
    with open(os.path.join(build_dir, "schemata", "mutants.json"), encoding="utf-8") as f:
        table = json.load(f)["mutants"]
    index = next((m["index"] for m in table if m["id"] == "seed:" + spec["seed"]), None)
    if index is None:
        raise SystemExit(f"figures: the schemata build in {build_dir} has no seed {spec['seed']}")
    return index


def short(desc):
    """Relacy's description of an operation, without its address."""
    d = re.sub(r"<0x[0-9a-f]+> ", "", desc)
    d = re.sub(r",? ?addr=0x[0-9a-f]+", "", d)
    return re.sub(r", in , \(0\)$", "", d).strip()


def relacy_history(out):
    """The failing execution's history: (step, thread, desc, function, file, line)."""
    m = re.search(r"^execution history \(\d+\):\n(.*?)\n\n", out, re.M | re.S)
    if not m:
        raise SystemExit("figures: no execution history in Relacy's output")
    rows = []
    for line in m.group(1).splitlines():
        h = HISTORY_LINE.match(line)
        if not h:
            continue
        w = WHERE.match(h.group(3))
        desc, func, path, number = (w.groups() if w else (h.group(3), "", "", "0"))
        rows.append((int(h.group(1)), h.group(2), desc, func, path, number))
    return rows


def function_name(func):
    """`void zap::Parker<zap::RelacyPlatform>::unpark() [with ...]` -> `Parker::unpark`."""
    f = re.sub(r"\s*\[with .*\]$", "", func)
    while re.search(r"<[^<>]*>", f):
        f = re.sub(r"<[^<>]*>", "", f)
    head = f.split("(")[0].split()
    f = head[-1] if head else f
    return "::".join(f.split("::")[-2:])


ATOMIC_CALL = re.compile(r"(\w+)(?:\(\$\))?\.(load|store|compare_exchange_\w+|exchange|fetch_\w+)\(")


def object_of(code):
    """The object a statement's atomic call is on: `state_` in `state_.exchange(...)`."""
    m = ATOMIC_CALL.search(code or "")
    if m:
        return m.group(1)
    m = re.search(r"\bfutex_(?:wait|wake)\((\w+)", code or "")
    if m:
        return m.group(1)
    return "sync_" if re.search(r"\b(load_sync|cas_sync)\(", code or "") else None


def sync_names(value):
    """A Sync word (sync.hpp) in words: `3758112768` -> `shutdown, notified, spawned 1`."""
    import design
    fields, states, _ = design.sync_layout(ROOT)
    word, out = int(value), []
    by_value = {v: k for k, v in states.items()}
    for name, first, bits in sorted(fields, key=lambda f: -f[1]):
        x = (word >> first) & ((1 << bits) - 1)
        if name == "state":
            out.append(by_value.get(x, str(x)))
        elif name == "notified" and x:
            out.append("notified")
        elif name not in ("unused", "notified") and x:
            out.append(f"{name.split(' /')[0] if 'shutdown' not in out else name.split('/ ')[-1]} {x}")
    return ", ".join(out)


def named(value, names):
    v = value.strip()
    if v.isdigit() and 2**32 <= int(v) < 2**48:  # an address (a task, a tagged list head): differs every run
        return "a pointer"
    if callable(names) and v.isdigit():
        return f"[{names(v)}]"
    return f"{v} ({names[v]})" if v in names else v


def describe(desc, code, names):
    """(result, stale, kind) of one Relacy step; `names` maps this object's values to names."""
    stale = "[NOT CURRENT]" in desc
    d = short(desc).replace(" [NOT CURRENT]", "")
    order = re.search(r"order=(\w+)", d)
    order = f", {order.group(1)}" if order else ""
    older = ": an older value" if stale else ""
    f = {}
    for key, value in re.findall(r"(?<!prev )\b(value|prev|arg|new|orig|cmp|xchg)=([^,\s)]+)", d):
        f.setdefault(key, value)
    if re.match(r"(atomic )?load", d):
        return f"reads {named(f['value'], names)}{order}{older}", stale, "load"
    if re.match(r"(atomic )?store", d):
        return f"writes {named(f['value'], names)}{order}", False, "store"
    if d.startswith("CAS"):
        if "succ" in d:
            return f"CAS {named(f['orig'], names)} -> {named(f['xchg'], names)}{order}{older}", stale, "rmw"
        if "SPURIOUSLY" in d:
            return f"CAS fails spuriously (a weak CAS may){order}", stale, "load"
        return f"CAS fails: reads {named(f['orig'], names)}, not {named(f['cmp'], names)}{order}{older}", stale, "load"
    if "fence" in d:
        fence = re.match(r"(\w+) fence", d)
        return f"{fence.group(1) if fence else ''} fence".strip(), False, "fence"
    rmw = re.match(r"(fetch_\w+|exchange)", d)
    if rmw and "futex_wait" in (code or "") and f.get("arg") == "0":
        return f"the kernel compares the word: {named(f['prev'], names)}", stale, "load"
    if rmw:
        arg = f.get("arg", f.get("value", ""))
        return (f"{rmw.group(1)}({arg}): {named(f.get('prev', '?'), names)} -> {named(f.get('new', '?'), names)}"
                f"{order}{older}"), stale, "rmw"
    return d, False, "other"


def tidy(code):
    """A statement as a row shows it: no `if (`, no trailing `{`, at most 72 characters."""
    c = re.sub(r"^(if|while) \((.*)\)\s*\{?$", r"\2", code.strip())
    c = re.sub(r"^if \(!?(.*)\) return;$", r"\1", c)
    c = re.sub(r"\s*\{$", "", c)
    return c if len(c) <= 72 else c[:69] + "..."


def extract_relacy(spec, out, seed=None):
    keep = re.compile(spec["keep"]) if "keep" in spec else None
    values = {"sync_": sync_names, **spec.get("values", {})}
    events, last_store = [], {}
    for step, thread, desc, func, path, number in relacy_history(out):
        addr = re.match(r"<(0x[0-9a-f]+)>", desc)
        code = source_line(path, number, seed)
        loud = re.search(r"DEADLOCK|USER ASSERT|DATA RACE|FREED|freed|blocking|unblocking|deallocation", desc)
        if addr and re.search(r"store|CAS succ|fetch_|exchange", desc):
            last_store[addr.group(1)] = None  # set to its row below if the step is drawn
        if re.search(r"\[(CTOR|DTOR|BEFORE|AFTER) (BEGIN|END)\]|THREAD FINISHED", desc):
            continue
        if (code is None or "/model/relacy_platform.hpp" in path) and not loud:
            continue
        if thread not in spec["threads"]:
            continue
        obj = object_of(code)
        result, stale, kind = describe(desc, code, values.get(obj, {}))
        if loud and not addr:
            result, kind = short(desc), "end" if re.search(r"DEADLOCK|ASSERT|RACE|FREED|freed", desc) else "other"
        text = tidy(code) if code and "/model/relacy_platform.hpp" not in path else short(desc)
        if text == result:
            result = ""
        where = function_name(func) if func else ""
        if keep and not (keep.search(text) or keep.search(desc) or keep.search(where)):
            continue
        event = {"thread": thread, "step": step, "text": text, "result": result, "stale": stale, "kind": kind,
                 "state": where}
        if events and all(events[-1][k] == event[k] for k in ("thread", "text", "result")) and not stale:
            events[-1]["repeats"] = events[-1].get("repeats", 1) + 1  # Relacy retrying one CAS: one row
            continue
        if stale and addr and last_store.get(addr.group(1)) is not None:
            event["missed"] = last_store[addr.group(1)]
        if addr and kind in ("store", "rmw"):
            last_store[addr.group(1)] = len(events)
        events.append(event)
    return events


# ---- TLC traces ------------------------------------------------------------------------


def tlc_states(out):
    """[(number, {variable: value text})] of TLC's error trace."""
    states, cur = [], None
    for line in out.splitlines():
        m = re.match(r"^State (\d+): <(\w+)", line)
        b = re.match(r"^(\d+): Back to state", line) or re.match(r"^Back to state (\d+)", line)
        if m:
            cur = (int(m.group(1)), {"<action>": m.group(2)}, [None])
            states.append(cur)
            continue
        if b:
            break
        if cur is None:
            continue
        v = re.match(r"^/\\ (\w+) = (.*)$", line)
        if v:
            cur[2][0] = v.group(1)
            cur[1][v.group(1)] = v.group(2).strip()
        elif cur[2][0] and line[:1].isspace() and line.strip():
            cur[1][cur[2][0]] += " " + line.strip()
        elif not line.strip():
            cur[2][0] = None
    return [(n, {k: re.sub(r"\s+", " ", v) for k, v in vs.items()}) for n, vs, _ in states]


def per_thread(value):
    """A TLA+ function value `(a :> x @@ b :> y)` as {a: x, b: y} (top level only)."""
    s = value.strip()
    if not (s.startswith("(") and s.endswith(")")):
        return {}
    s, parts, depth, start, i = s[1:-1], [], 0, 0, 0
    while i < len(s):
        if s.startswith("<<", i) or s.startswith(">>", i):
            depth += 1 if s[i] == "<" else -1
            i += 2
            continue
        if s[i] in "([{":
            depth += 1
        elif s[i] in ")]}":
            depth -= 1
        elif depth == 0 and s.startswith("@@", i):
            parts.append(s[start:i])
            start = i = i + 2
            continue
        i += 1
    parts.append(s[start:])
    return {k.strip().strip('"'): v.strip() for k, _, v in (p.partition(":>") for p in parts) if v}


def brief(var, value, before=None):
    """A shown variable's value, shorter: a function by its changed entries, Sync by its fields."""
    v = value.replace('"', "")
    new, old = per_thread(value), per_thread(before or "")
    if new:
        return ", ".join(f"{var}[{k}]: {x}".replace('"', "") for k, x in new.items() if old.get(k) != x)
    if var == "sync":
        f = dict(re.findall(r"(\w+) \|-> (\w+)", v))
        flags = [f["state"], f"spawned {f['spawned']}", f"idle {f['idle']}"] + (["notified"] if f["notified"] == "TRUE" else [])
        return "sync: " + ", ".join(flags)
    return f"{var}: {v}"


def tla_actions():
    """{pc label: (action, the C++ it abstracts)}: the label each action of
    tla/Pool.tla is enabled at, and docs/protocol.md section 2's column for it."""
    spec = open(os.path.join(ROOT, "tla", "Pool.tla"), encoding="utf-8").read()
    doc = open(os.path.join(ROOT, "docs", "protocol.md"), encoding="utf-8").read()
    cxx = {}
    for row in re.findall(r"^\| (`\w+`(?:, `\w+`)*) \| ([^|]+) \|", doc, re.M):
        for action in re.findall(r"`(\w+)`", row[0]):
            cxx.setdefault(action, re.sub(r"`", "", row[1]).strip())
    labels = {}
    parts = re.split(r"^(\w+)\((\w)\) ==", spec, flags=re.M)
    for name, var, body in zip(parts[1::3], parts[2::3], parts[3::3]):
        for label in re.findall(rf'pc\[{var}\] = "(\w+)"', body)[:1]:
            labels.setdefault(label, (name, cxx.get(name, "")))
    return labels


def gloss(cxx):
    """docs/protocol.md's C++ column, short: the part before a parenthesis, and its step label."""
    base = cxx.split(" (")[0]
    step = re.findall(r"\b([ABHPK]\d)\b", cxx)
    return base + (f" ({step[-1]})" if step and step[-1] not in base else "")


def extract_tla(spec, out):
    states = tlc_states(out)
    actions = tla_actions()
    if not states:
        raise SystemExit(f"figures: TLC printed no trace for {spec['config']}:\n{out[-2000:]}")
    events = []
    for (n0, a), (n1, b) in zip(states, states[1:]):
        pa, pb = per_thread(a["pc"]), per_thread(b["pc"])
        movers = [t for t in pb if pa.get(t) != pb[t]]
        if not movers:  # the same label again: whose own variables changed (a frame, isIdle, ...)
            for var in sorted(b):
                fa, fb = per_thread(a.get(var, "")), per_thread(b.get(var, ""))
                movers = [t for t in fb if fa.get(t) != fb[t]]
                if movers:
                    break
        # A spawn moves the spawner and starts the new thread: the step is the spawner's.
        started = [t for t in movers if pa.get(t) == '"unborn"']
        thread = ([t for t in movers if t not in started] or movers or ["?"])[0]
        if not movers:  # a step of the kernel's (Spurious): the thread that left a futex queue
            left = [t for t in spec["threads"] if re.search(rf"\b{t}\b", a.get("sleepers", "")) and
                    not re.search(rf"\b{t}\b", b.get("sleepers", ""))]
            thread = (left or ["?"])[0]
        if thread not in spec["threads"]:
            continue
        changes = [brief(v, b[v], a.get(v)) for v in spec["show"] if a.get(v) != b.get(v)]
        label = pa.get(thread, "?").replace('"', "")
        action, cxx = actions.get(label, (label, ""))
        if b["<action>"] != "Step":  # TLC names the action when it is not one of Step's
            action, cxx = b["<action>"], {"Spurious": "the kernel: a wake-up nobody sent"}.get(b["<action>"], "")
        text = f"{action}: {gloss(cxx)}" if cxx else action
        if started and thread not in started:
            text += f"; starts {', '.join(started)}"
        events.append({"thread": thread, "step": n1, "text": text, "result": "; ".join(changes[:1]),
                       "state": "; ".join(changes[1:]), "stale": False, "kind": "step"})
    return events


# ---- GenMC execution graphs ----------------------------------------------------------------

NODE = re.compile(r'^\s*"\((\d+), (\d+)\)" \[label=<(.*)>, (?:style=filled, fillcolor=\w+, )?tooltip')
EDGE = re.compile(r'^"\((\d+), (\d+)\)"->"\((\d+), (\d+)\)"\[color=green')
ORDERS = {"rlx": "relaxed", "acq": "acquire", "rel": "release", "ar": "acq_rel", "acqrel": "acq_rel", "sc": "seq_cst"}


def extract_genmc(spec, out, dot):
    """The litmus threads' atomic events of GenMC's error graph, a row per
    program-order position, with the location each reads or writes named
    after the litmus's atomics in declaration order (their initial writes,
    in main's thread, come in that order)."""
    nodes, rf = {}, {}
    for line in dot.splitlines():
        n = NODE.match(line)
        if n:
            nodes[(int(n.group(1)), int(n.group(2)))] = re.sub(r"<FONT.*?</FONT>", "", n.group(3)).strip()
        e = EDGE.match(line)
        if e:
            rf[(int(e.group(3)), int(e.group(4)))] = (int(e.group(1)), int(e.group(2)))
    # Coherence lines: `: [ (0, 4): Wna (S#(0, 4), 0) (1, 7): Wrlx (S#(0, 4), 1) ]`, one per location.
    location_of, order_of = {}, {}
    inits = sorted(ev for ev, label in nodes.items() if ev[0] == 0 and label.startswith("W<SUP>na</SUP> (, "))
    coherence = re.findall(r"^: \[ (.*) \]$", out, re.M)
    init_lists = []
    for line in coherence:
        writes = [(int(a), int(b)) for a, b in re.findall(r"\((\d+), (\d+)\):", line)]
        if writes and writes[0] in inits:
            init_lists.append(writes)
    names = spec["locations"]
    for i, writes in enumerate(sorted(init_lists)[:len(names)]):
        for pos, w in enumerate(writes):
            location_of[w], order_of[w] = names[i], pos
    rows, events, index, pending = {}, [], {}, {}
    for ev in sorted(nodes, key=lambda e: (e[0], e[1])):
        label = nodes[ev]
        m = re.match(r"([CU]?[RWF])<SUP>(\w+)</SUP>(?: \(([^,]*), ([^)]*)\))?", label)
        if ev[0] == 0 or not m or m.group(2) == "na" or (m.group(3) or ""):
            continue
        kind, order, value = m.group(1), ORDERS.get(m.group(2), m.group(2)), m.group(4)
        src = rf.get(ev)
        where = location_of.get(src, location_of.get(ev, "?"))
        whose = "the initial value" if src and src[0] == 0 else f"thread {src[0]}'s write" if src else "?"
        if kind in ("CR", "UR"):  # the read half of a CAS or an RMW: drawn with its write half
            pending[ev[0]] = (ev, value, where, whose)
            continue
        if kind in ("CW", "UW") and ev[0] in pending:
            rev, rvalue, where, whose = pending.pop(ev[0])
            text = f"{where}: CAS {rvalue} -> {value} ({order})" if kind == "CW" else f"{where}: RMW ({order})"
            result = f"reads {rvalue} ({whose}), writes {value}"
            kind = "rmw"
        elif kind == "F":
            text, result, kind = f"fence({order})", "", "fence"
        elif kind == "W":
            text, result, kind = f"{where}.store({value}, {order})", f"W{m.group(2)} {where} = {value}", "store"
        else:
            text, result, kind = f"{where}.load({order})", f"R{m.group(2)} {where} -> {value}: reads {whose}", "load"
        row = rows.get(ev[0], 0)
        rows[ev[0]] = row + 1
        index[ev] = len(events)
        events.append({"thread": str(ev[0]), "step": f"({ev[0]}, {ev[1]})", "row": row, "text": text,
                       "result": result, "stale": False, "kind": kind})
    for ev, i in index.items():  # a read whose write is overwritten by one drawn here: it missed that one
        src = rf.get(ev)
        later = [w for w in location_of if src in location_of and location_of[w] == location_of[src]
                 and order_of[w] > order_of[src] and w in index]
        if events[i]["kind"] == "load" and later:
            events[i]["stale"], events[i]["missed"] = True, index[later[0]]
    return events


# ---- the driver ------------------------------------------------------------------------


def trace_of(name, spec, out, seed=None):
    if spec["kind"] == "genmc":
        out, dot = out
        events = extract_genmc(spec, out, dot)
    else:
        events = extract_relacy(spec, out, seed) if spec["kind"] == "relacy" else extract_tla(spec, out)
    verdict = re.search(r"^executions explored: (\S+); result: (.*)$", out, re.M)
    if spec["kind"] == "genmc":
        verdict = f"{verdict.group(2)} under {spec['model'].upper()} ({verdict.group(1)} executions explored)"
    elif spec["kind"] == "relacy":
        verdict = f"{verdict.group(2)} (execution {verdict.group(1)})"
    else:
        m = re.search(r"^Error: (.*)$", out, re.M)
        verdict = m.group(1) if m else "no error"
        back = re.search(r"^(?:\d+: )?Back to state (\d+)", out, re.M)
        if back:
            last = max(n for n, _ in tlc_states(out))
            verdict += f" (a lasso: states {back.group(1)} to {last} repeat for ever)"
    return {"name": name, "checker": {"relacy": "Relacy", "tla": "TLC", "genmc": "GenMC"}[spec["kind"]],
            "verdict": verdict, "events": events}


def drawable(name, found):
    """What seqdiag draws: the checker's findings (the committed trace) with the
    words the spec gives them (title, thread labels, caption)."""
    spec = SPECS[name]
    return {**found, "title": spec["title"], "source": spec["source"], "end": spec["end"],
            "caption": spec["caption"], "threads": [{"key": k, "label": v} for k, v in spec["threads"].items()]}


def run(kind, names, build_dir, traces_dir, tmp, update, after=None):
    chosen = [n for n in SPECS if (kind == "all" or SPECS[n]["kind"] == kind) and (not names or n in names)]
    if not chosen:
        raise SystemExit(f"figures: no trace of kind {kind}{' named ' + ' '.join(names) if names else ''}")
    missing, stale = [], []
    for name in chosen:
        spec = SPECS[name]
        out = run_checker(spec, build_dir, tmp)
        if out is None:
            missing.append(name)
            continue
        trace = trace_of(name, spec, out, seed_switch(spec, build_dir))
        path = os.path.join(traces_dir, name + ".json")
        text = json.dumps(trace, indent=1, ensure_ascii=False) + "\n"
        if update:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"traces: wrote {os.path.relpath(path, ROOT)} ({len(trace['events'])} steps)")
            continue
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if old != text:
            stale.append(name)
            print(f"traces: {name}: the checker's counterexample is not the committed one")
            a, b = json.loads(old or "{}").get("events", []), trace["events"]
            for i in range(max(len(a), len(b))):
                if i >= len(a) or i >= len(b) or a[i] != b[i]:
                    print(f"  first difference at drawn step {i}:\n    committed {a[i] if i < len(a) else None}"
                          f"\n    now       {b[i] if i < len(b) else None}")
                    break
        else:
            print(f"traces: {name}: matches ({len(trace['events'])} steps, {trace['verdict']})")
    if update and after:
        after()
    if stale:
        print(f"traces: {len(stale)} stale; if the change is meant, run tools/figures/generate --traces {kind} "
              "and review the figures")
        return 1
    if missing and len(missing) == len(chosen):
        print(f"SKIPPED: the checker or model binaries for {', '.join(missing)} are missing")
        return 77
    if missing:
        print(f"traces: not run (binary missing): {', '.join(missing)}")
        return 1
    return 0
