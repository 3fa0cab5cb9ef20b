#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Model-check every configuration of tla/Pool.tla with TLC and compare each
# outcome with the expected one.
#
#   tla/run.sh            the default set (a few minutes on 2 cores)
#   tla/run.sh --claims   of those, the ones expected to pass: the safety and
#                         liveness claims (ctest `tla`, run by tools/test)
#   tla/run.sh --teeth    of those, the seeded and mutated configurations,
#                         each expected to fail its check (ctest `tla.teeth`)
#   tla/run.sh --quick    the quick set below, under a minute on 2 idle cores:
#                         the pool with its spin (shutdown and join, every
#                         invariant and liveness property), the helping waits
#                         and an isolated one (ctest `tla.quick`, run by
#                         tools/verify; tools/test runs them with the rest)
#   tla/run.sh --deep     also the large liveness configurations (slow)
#   tla/run.sh MCSmall    only the named configuration(s)
#
# TLC is looked up as $TLA2TOOLS_JAR, then /opt/tla/tla2tools.jar, then a
# `tlc` wrapper on PATH; without any of them the script prints SKIPPED and
# exits 77 (ctest's SKIP_RETURN_CODE).  Exit status: 0 if every outcome was
# the expected one, 1 otherwise.
#
# The spec is tla/Pool.tla unless a configuration names another module
# (fourth column). Expected outcomes: "pass", "deadlock" (TLC reports a
# reachable state with no successor, exit code 11), "invariant <Name>" (TLC must report that
# invariant violated, exit code 12), "action <Name>" (an action property
# [][A]_v, exit code 13, named by TLC) or "temporal <Name>" (exit code 13; TLC
# does not name the violated temporal property, so such configurations
# check exactly one PROPERTY, and the script verifies that it is <Name>).
set -u

here=$(cd "$(dirname "$0")" && pwd)
workers=${TLC_WORKERS:-2}

# name            expectation                 deep-only
configs=(
  "MCSmall                pass                        no"
  "MCNoShutdown           pass                        no"
  "MCLarge                pass                        no"
  "MCLargeLive            pass                        yes"
  "MCSeedSafe             pass                        no"
  "MCSeedTaskLost         invariant:NoTaskLost        no"
  "MCSeedEventSafety      invariant:EventSafety       no"
  "MCSeedPoolSafety       invariant:PoolSafety        no"
  "MCSeedStranded         temporal:TasksEventuallyRun no"
  "MCSeedJoinHang         temporal:JoinReturns        no"
  "MCSeedShutdownSticky   action:ShutdownSticky       no"
  "MCMutNoWakeAll         temporal:JoinReturns        no"
  "MCMutRerun             temporal:TasksEventuallyRun no"
  "MCMutNoWake            temporal:SleeperWoken       no"
  "MCMutWakeAny           invariant:OneWaking         no"
  "MCMutNoCap             invariant:SpawnBound        no"
  "MCMutNoCapType         invariant:TypeOK            no"
  "MCMutDup               invariant:TaskConservation  no"
  "MCApart                pass                        no"
  "MCApartLive            pass                        yes"
  "MCJoinTwiceLive        pass                        no"
  "MCMutApart             invariant:PoolSafety        no"
  "MCMutApartIdle         invariant:PoolSafety        no"
  "MCMutApartWarm         invariant:PoolSafety        no"
  "MCMutWarmReload        invariant:PoolSafety        no"
  "MCMutWarmRerun         invariant:PoolSafety        no"
  "MCMutJoinTwice         temporal:JoinReturns        no"
  "MCMutCloserLeak        temporal:JoinReturns        no"
  "MCWakeup               pass                        no"
  "MCWakeOne              pass                        no"
  "MCWakeupRetry          invariant:NoPushDuringSearch no"
  "MCMutHandOver          invariant:SpawnsWithinTasks no"
  # Work conservation (WorkConserving), the fixed rule and the one before it
  "MCWorkConserving       pass                        no"
  "MCWorkConservingOutside pass                       no"
  "MCMutBefore19          invariant:WorkConserving    no"
  "MCMutBefore19Outside   invariant:WorkConserving    no"
  # A5's spin (Spin = TRUE), and the role kept after it ran out
  "MCSpin                 pass                        no"
  "MCSpinSmall            pass                        no"
  "MCMutSpinKeep          invariant:WorkConserving    no"
  # The lone-task delay (StealDelay = TRUE; buffer.hpp step 3a), and a refusal
  # instead. MCDelay's liveness run (3 workers) takes minutes: --deep; its
  # invariants are MCDelayInvariants, its liveness with 2 workers MCDelaySmall.
  # MCDelayOutside (3 workers, 2.1 million states) is --deep too; the default
  # set checks the same model with 2 workers (MCDelayOutsideSmall).
  "MCDelay                pass                        yes"
  "MCDelayInvariants      pass                        no"
  "MCDelayOutside         pass                        yes"
  "MCDelayOutsideSmall    pass                        no"
  "MCDelaySmall           pass                        no"
  "MCMutRefuse            invariant:WorkConserving    no"
  # Protocol H (helping waits, src/zap/helping_wait.hpp): tla/Help.tla
  "HelpOne                pass                        no   Help"
  "HelpSmall              pass                        no   Help"
  "HelpWork               pass                        no   Help"
  "HelpMutNoK1            deadlock                    no   Help"
  "HelpMutNoK2            deadlock                    no   Help"
  "HelpMutNoRecheck       deadlock                    no   Help"
  "HelpMutOwesEarly       deadlock                    no   Help"
  # Shutdown (B1) with helpers asleep: shutdown() wakes each of them (K3)
  "HelpShutdown           pass                        no   Help"
  "HelpMutNoShutWake      deadlock                    no   Help"
  # After shutdown a helper's sleep ends at a timeout too (H6): the outside
  # caller's put-back (OC4b) wakes nobody then
  "HelpShutdownOutside    pass                        no   Help"
  "HelpMutShutNoTimeout   deadlock                    no   Help"
  # The isolated sleeper (isolation.hpp I3-I4) in tla/Help.tla
  "HelpIsoOne             pass                        no   Help"
  "HelpIso                pass                        no   Help"
  "HelpIsoChild           pass                        no   Help"
  # Three helpers: 3.8 million distinct states (HelpIsoThree), 0.6 million (...Done)
  "HelpIsoThree           pass                        yes  Help"
  "HelpIsoThreeDone       pass                        yes  Help"
  # No timeout: K2 alone wakes the isolated sleeper (no task in flight in the model)
  "HelpIsoNoTimeout       pass                        no   Help"
  "HelpIsoChildNoTimeout  pass                        no   Help"
  # Not armed (isonok2): the timeout still ends every sleep, so only latency;
  # every wait returns, and HelpMutIsoNoK2 shows the sleep at zero
  "HelpIsoNoK2Polls       pass                        no   Help"
  "HelpMutIsoNoK2         invariant:NoSleepAtZero     no   Help"
  "HelpMutIsoNoRecheck    invariant:NoSleepAtZero     no   Help"
  "HelpMutIsoConsumes     temporal:AllReturn          no   Help"
  "HelpMutIsoConsumesInv  invariant:IsoNeverConsumes  no   Help"
  "HelpMutK1WakesIsolated temporal:AllReturn          no   Help"
  "HelpMutIsoAny          invariant:IsoRunsOwnRegion  no   Help"
  # The outside caller (outside_wait.hpp, Protocol OC) in tla/Help.tla: one
  # task of its call (HelpOutsideOne, 19,941 states); two tasks: --deep
  "HelpOutsideOne         pass                        no   Help"
  "HelpOutside            pass                        yes  Help"
  "HelpMutOutAny          invariant:OutsideRunsOwnRegion no Help"
  "HelpMutOutDrop         invariant:NoTaskLost        no   Help"
  "HelpMutOutNoNotify     deadlock                    no   Help"
  "HelpMutOutNoArm        invariant:NoSleepAtZero     no   Help"
  "HelpMutOutNoWake       deadlock                    no   Help"
)

# --quick: claims only, each checked in seconds on an idle machine.
quick=(MCSpinSmall HelpSmall HelpIsoOne)

deep=no
kind=all
only=()
for arg in "$@"; do
  case "$arg" in
    --deep) deep=yes ;;
    --claims|--teeth) kind=${arg#--} ;;
    --quick) kind=claims; only+=("${quick[@]}") ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) only+=("${arg%.cfg}") ;;
  esac
done

# Locate TLC. The seeded and mutated configurations fail in seconds, where
# Java's optimizing compiler (C2) costs more than it saves: --teeth uses the
# quick compiler alone (MCMutDup took 1.5 s of CPU instead of 2.6, the
# longest, MCSeedJoinHang, 40 s either way). The claims keep both: MCSpin
# took 8% more CPU without C2.
# TLC writes the standard modules it parses (Naturals.tla ...) into Java's
# temporary directory: one of its own, or two TLC processes at once (ctest
# -j2: this script and tools/figures' trace check) may read each other's
# half-written copy (seen once: a parse error, NullPointerException).
tmp=$(mktemp -d "${TMPDIR:-/tmp}/zap-tla.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
java_opts=(-XX:+UseParallelGC "-Djava.io.tmpdir=$tmp")
[ "$kind" != teeth ] || java_opts+=(-XX:TieredStopAtLevel=1)
tlc_cmd=()
if [ -n "${TLA2TOOLS_JAR:-}" ] && [ -f "${TLA2TOOLS_JAR}" ]; then
  tlc_cmd=(java "${java_opts[@]}" -cp "$TLA2TOOLS_JAR" tlc2.TLC)
elif [ -f /opt/tla/tla2tools.jar ]; then
  tlc_cmd=(java "${java_opts[@]}" -cp /opt/tla/tla2tools.jar tlc2.TLC)
elif command -v tlc >/dev/null 2>&1; then
  tlc_cmd=(tlc)
fi
if [ ${#tlc_cmd[@]} -eq 0 ]; then
  echo "SKIPPED: TLC not found (set TLA2TOOLS_JAR, or install /opt/tla/tla2tools.jar)"
  exit 77
fi
if [ "${tlc_cmd[0]}" = java ] && ! command -v java >/dev/null 2>&1; then
  echo "SKIPPED: tla2tools.jar found but no java on PATH"
  exit 77
fi

# The property names listed under PROPERTY/PROPERTIES in a config.
config_properties() {
  awk '/^(PROPERTY|PROPERTIES)/{on=1; for(i=2;i<=NF;i++) print $i; next}
       /^[A-Z]+/{on=0} on && NF {print $1}' "$1"
}

# True when the run just made ($rc, $out) exited with code $1 and printed a
# line matching $2.
tlc_said() { [ "$rc" -eq "$1" ] && grep -q "$2" "$out"; }

failures=0
printf '%-20s %-30s %-9s %10s %6s %8s\n' config expected result distinct depth seconds
for line in "${configs[@]}"; do
  read -r name expect deeponly module <<<"$line"
  module=${module:-Pool}
  if [ ${#only[@]} -gt 0 ]; then
    match=no
    for o in "${only[@]}"; do [ "$o" = "$name" ] && match=yes; done
    [ $match = yes ] || continue
  elif [ "$deeponly" = yes ] && [ $deep = no ]; then
    continue
  fi
  case "$kind:$expect" in
    teeth:pass) continue ;;  # a claim, not a seeded failure
    claims:pass | all:* | teeth:*) ;;
    claims:*) continue ;;    # a seeded failure, not a claim
  esac
  cfg="$here/$name.cfg"
  out="$tmp/$name.out"
  start=$(date +%s%N)
  # TLC resolves the spec's module relative to the working directory.
  extra=()
  # Large liveness runs: check the temporal properties once, at the end,
  # instead of again and again on the growing graph.
  [ "$deeponly" = yes ] && extra=(-lncheck final)
  (cd "$here" && "${tlc_cmd[@]}" -workers "$workers" ${extra[@]+"${extra[@]}"} -cleanup \
      -metadir "$tmp/meta-$name" -config "$name.cfg" "$module.tla") >"$out" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}')
  distinct=$(sed -n 's/.* \([0-9][0-9]*\) distinct states found.*/\1/p' "$out" | tail -1)
  depth=$(sed -n 's/^The depth of the complete state graph search is \([0-9]*\).*/\1/p' "$out" | tail -1)
  [ -n "$depth" ] || depth=$(grep -c '^State [0-9]*:' "$out")  # trace length
  case "$expect" in
    pass)        tlc_said 0 'Model checking completed. No error has been found.' ;;
    invariant:*) tlc_said 12 "^Error: Invariant ${expect#invariant:} is violated" ;;
    deadlock)    tlc_said 11 '^Error: Deadlock reached' ;;
    action:*)    tlc_said 13 "^Error: Action property ${expect#action:} is violated" ;;
    temporal:*)  # TLC does not name it: the configuration checks only that one
                 tlc_said 13 '^Error: Temporal properties were violated' \
                   && [ "$(config_properties "$cfg" | tr '\n' ' ')" = "${expect#temporal:} " ] ;;
    *)           false ;;
  esac && result=ok || result=FAIL
  printf '%-20s %-30s %-9s %10s %6s %8s\n' "$name" "$expect" "$result" \
    "${distinct:-?}" "${depth:-?}" "$secs"
  if [ $result != ok ]; then
    failures=$((failures + 1))
    echo "---- TLC output of $name (exit code $rc), last 40 lines:"
    tail -40 "$out"
    echo "----"
  fi
done

if [ $failures -gt 0 ]; then
  echo "tla: $failures configuration(s) with an unexpected outcome"
  exit 1
fi
echo "tla: all outcomes as expected"
exit 0
