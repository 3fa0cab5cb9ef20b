# SPDX-License-Identifier: MIT
# Shared by tools/verify and tools/test: installs what is missing, builds a
# preset, runs ctest labels and keeps a summary. Sourced, not run.
set -euo pipefail

ZAP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ZAP_RUNS=()     # PRESET:LABEL:EXIT-CODE of each ctest run
ZAP_STEPS=()    # "WALL CPU LOAD STEP" of each build and ctest run
ZAP_START=$SECONDS
ZAP_FAILED=0
ZAP_REPORTS=$(mktemp -d "${TMPDIR:-/tmp}/zap-reports.XXXXXX")  # their JUnit reports
trap 'rm -rf "$ZAP_REPORTS"' EXIT

# zap_install [--no-install-recommends] PACKAGE...: the Debian packages
# that are missing, with apt-get (as root).
zap_install() {
  local options=()
  if [[ ${1:-} == --no-install-recommends ]]; then
    options+=("$1")
    shift
  fi
  local missing=()
  for pkg in "$@"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  ((${#missing[@]})) || return 0
  echo "== installing: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages and not root: run as root or install them" >&2
    return 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${options[@]}" "${missing[@]}" >/dev/null
}

# Debian packages the native builds need (pkg-config: the consumer test).
zap_install_deps() {
  local wanted=(cmake make g++ clang libclang-rt-14-dev libgtest-dev relacy-dev libbenchmark-dev
                libtbb-dev libboost-dev python3 patch pkg-config)
  command -v java >/dev/null || wanted+=(default-jre-headless)  # for TLC, when its jar is present
  zap_install "${wanted[@]}"
}

# The cross compilers and their runners (the windows and arm64 presets),
# without recommended packages: Wine alone recommends hundreds of megabytes.
# A failure here is not fatal: zap_platform then reports the platform skipped.
zap_install_cross_deps() {
  zap_install --no-install-recommends g++-mingw-w64-x86-64-posix wine64 g++-12-aarch64-linux-gnu qemu-user ||
    echo "== could not install the cross toolchains: their platforms will be reported SKIPPED"
}

# zap_cpu_seconds VAR: sets VAR to the CPU time (user + system) of this
# shell's finished children so far, whole seconds: the second line of bash's
# `times`, which must run in this shell (in a $(...) subshell it would count
# the subshell's children only).
zap_cpu_seconds() {
  local file="$ZAP_REPORTS/times.$BASHPID"  # per process: the background builds count theirs
  times >"$file"
  printf -v "$1" '%s' "$(awk 'NR == 2 {
    split($1, u, /[ms]/); split($2, s, /[ms]/)
    printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$file")"
}

# zap_timed STEP COMMAND...: runs the command and keeps, for the summary, its
# wall time, the CPU time it used (a measure that the machine's other work
# changes little) and the load average when it ended (how much else ran).
zap_timed() {
  local step=$1 start=$SECONDS before after rc=0
  zap_cpu_seconds before
  shift
  "$@" || rc=$?
  zap_cpu_seconds after
  ZAP_STEPS+=("$((SECONDS - start)) $((after - before)) $(cut -d' ' -f1 /proc/loadavg) $step")
  return "$rc"
}

# zap_build PRESET [TARGET...]: configure and build (everything, or the
# targets named) with at most two jobs (the machine has two cores).
zap_build() {
  local preset=$1
  shift
  echo "== build: $preset${*:+ ($*)}"
  zap_timed "build $preset${*:+ ($*)}" zap_build_now "$preset" "$@"
}
zap_build_now() {
  local preset=$1 debug_info=()
  shift
  # The debug builds with line tables only (-g1, not the presets' -g): a
  # sanitizer's report or a backtrace still names files and lines, and a
  # file compiles in about a tenth less CPU (test_task_group.cpp: 3.17 s
  # with -g, 2.89 s with -g1). The windows and arm64 presets have none.
  case $preset in default|tsan|asan) debug_info=(-DCMAKE_CXX_FLAGS_DEBUG=-g1) ;; esac
  cmake --preset "$preset" "${debug_info[@]}" >/dev/null
  if (($#)); then
    cmake --build --preset "$preset" -j2 --target "$@"
  else
    cmake --build --preset "$preset" -j2
  fi
}

# The background builds. On two cores a build alone keeps 1.5 of them busy
# (its links and its longest files run alone) and the checks 1.6-1.9, so
# tools/test builds the later presets behind everything else: one queue, at
# the idle scheduling class (SCHED_IDLE; nice 19 where chrt cannot), which
# takes only the CPU the foreground leaves idle and all of it while the
# foreground waits for its build. At nice 19 it still slowed the checks
# beside it: TLC's runs took 1.4-1.6 times as long (the queue's compiles ran
# whenever a TLC thread paused); a SCHED_IDLE task gives way at once.
#
# zap_build_queue PRESET:TARGET... : starts building the presets in this
# order in the background (TARGET, or everything when empty). Each build's
# output goes to its own log, printed when zap_build_wait reaches it, so
# the output stays in the order of the steps.
zap_build_queue() {
  ZAP_QUEUE=$ZAP_REPORTS/queue
  mkdir -p "$ZAP_QUEUE"
  (
    chrt --idle -p 0 "$BASHPID" 2>/dev/null || renice -n 19 -p "$BASHPID" >/dev/null
    for spec in "$@"; do
      zap_queue_one "${spec%%:*}" "${spec#*:}"
    done
  ) &
  ZAP_QUEUE_PID=$!
}
# zap_queue_one PRESET TARGET: one queued build; its result (exit code, wall
# and CPU seconds) in $ZAP_QUEUE/PRESET.done, written last.
zap_queue_one() {
  local preset=$1 target=$2 start=$SECONDS before after rc=0
  zap_cpu_seconds before
  # shellcheck disable=SC2086  # an empty target builds everything
  zap_build_now "$preset" $target >"$ZAP_QUEUE/$preset.log" 2>&1 || rc=$?
  zap_cpu_seconds after
  echo "$rc $((SECONDS - start)) $((after - before))" >"$ZAP_QUEUE/$preset.part"
  mv "$ZAP_QUEUE/$preset.part" "$ZAP_QUEUE/$preset.done"
}
# zap_build_wait PRESET: waits for the queued build of PRESET, prints its
# output and keeps its step for the summary (its wall time is from the start
# of that build, most of it beside the other steps). Fails when it failed.
zap_build_wait() {
  local preset=$1 start=$SECONDS rc wall cpu
  echo "== build: $preset (in the background)"
  until [ -e "$ZAP_QUEUE/$preset.done" ]; do
    kill -0 "$ZAP_QUEUE_PID" 2>/dev/null || break
    sleep 1
  done
  cat "$ZAP_QUEUE/$preset.log" 2>/dev/null || true
  if ! read -r rc wall cpu <"$ZAP_QUEUE/$preset.done" 2>/dev/null; then
    echo "the background builds stopped before $preset's" >&2
    rc=1 wall=0 cpu=0
  fi
  ZAP_STEPS+=("$wall $cpu $(cut -d' ' -f1 /proc/loadavg) build $preset (background; waited $((SECONDS - start)) s)")
  return "$rc"
}
# zap_build_queue_end: reaps the queue, so that the total CPU time counts it.
zap_build_queue_end() {
  [ -z "${ZAP_QUEUE_PID:-}" ] || wait "$ZAP_QUEUE_PID" || true
}

# zap_ctest PRESET LABEL: runs one label. ctest prints a line per test (the
# output of a failing one in full); each test's output is kept apart in a
# JUnit report that zap_report reads, so that no two tests' lines mix.
zap_ctest() {
  local preset=$1 label=$2 rc=0
  echo "== ctest: $preset -L $label"
  # Output sizes: the report needs all of it (ctest keeps 1 KiB of a passing test's by default).
  zap_timed "ctest $preset -L $label" \
    ctest --preset "$preset" -L "^${label}\$" --output-on-failure -j2 \
          --output-junit "$ZAP_REPORTS/$preset.$label.xml" \
          --test-output-size-passed 1000000 --test-output-size-failed 1000000 || rc=$?
  ((rc == 0)) || ZAP_FAILED=1
  ZAP_RUNS+=("$preset:$label:$rc")
}

# zap_platform PRESET COMPILER: builds the unit tests and examples of one
# more platform (portable, windows, arm64) and runs them (label unit). When
# the preset's compiler is missing, one skipped test stands for the
# platform in the summary, never a pass; without Wine or qemu each test
# reports skipped itself (tools/emulate).
zap_platform() {
  local preset=$1 compiler=$2
  if ! command -v "$compiler" >/dev/null; then
    echo "== skipped: $preset (no $compiler)"
    printf '<testsuite><testcase name="platform.%s" status="notrun" time="0"><system-out>%s</system-out></testcase></testsuite>\n' \
      "$preset" "SKIPPED: no $compiler" >"$ZAP_REPORTS/$preset.unit.xml"
    ZAP_RUNS+=("$preset:unit:0")
    return
  fi
  if [ -n "${ZAP_QUEUE:-}" ]; then
    zap_build_wait "$preset" || { ZAP_FAILED=1; ZAP_RUNS+=("$preset:unit:1"); return; }
  else
    zap_build "$preset" zap_unit_tests || { ZAP_FAILED=1; ZAP_RUNS+=("$preset:unit:1"); return; }
  fi
  zap_ctest "$preset" unit
}

# zap_report: the wall time of each step, one table per kind of check
# (tools/report.py), then the line CI reads, "zap: N passed, N failed";
# fails when a ctest run failed.
zap_report() {
  zap_build_queue_end
  echo
  echo "== summary"
  echo
  echo "Time per step (seconds of wall clock and of CPU; the 1-minute load average when the step ended)"
  printf '  %6s  %6s  %5s  %s\n' wall cpu load step
  local wall cpu load step
  for step in "${ZAP_STEPS[@]}"; do
    read -r wall cpu load step <<<"$step"
    printf '  %6s  %6s  %5s  %s\n' "$wall" "$cpu" "$load" "$step"
  done
  zap_cpu_seconds cpu
  printf '  %6s  %6s  %5s  %s\n' "$((SECONDS - ZAP_START))" "$cpu" "$(cut -d' ' -f1 /proc/loadavg)" \
    "in all (load average now: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs)"
  python3 "$ZAP_ROOT/tools/report.py" "$ZAP_REPORTS" "${ZAP_RUNS[@]}" || ZAP_FAILED=1
  return "$ZAP_FAILED"
}
