# Shared by tools/verify and tools/test: installs what is missing, builds a
# preset, runs ctest labels and keeps a summary. Sourced, not run.
set -euo pipefail

ZAP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ZAP_RUNS=()     # PRESET:LABEL:EXIT-CODE of each ctest run
ZAP_FAILED=0
ZAP_REPORTS=$(mktemp -d "${TMPDIR:-/tmp}/zap-reports.XXXXXX")  # their JUnit reports
trap 'rm -rf "$ZAP_REPORTS"' EXIT

# Debian packages the builds need; installed only when missing.
zap_install_deps() {
  local wanted=(cmake make g++ clang libclang-rt-14-dev libgtest-dev relacy-dev libbenchmark-dev
                libtbb-dev libboost-dev python3 patch)
  local missing=()
  for pkg in "${wanted[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  command -v java >/dev/null || missing+=(default-jre-headless)  # for TLC, when its jar is present
  if ((${#missing[@]})); then
    echo "== installing: ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
      echo "missing packages and not root: run as root or install them" >&2
      return 1
    fi
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# zap_build PRESET [TARGET...]: configure and build (everything, or the
# targets named) with at most two jobs (the machine has two cores).
zap_build() {
  local preset=$1
  shift
  echo "== build: $preset${*:+ ($*)}"
  cmake --preset "$preset" >/dev/null
  if (($#)); then
    cmake --build --preset "$preset" -j2 --target "$@"
  else
    cmake --build --preset "$preset" -j2
  fi
}

# zap_ctest PRESET LABEL: runs one label. ctest prints a line per test (the
# output of a failing one in full); each test's output is kept apart in a
# JUnit report that zap_report reads, so that no two tests' lines mix.
zap_ctest() {
  local preset=$1 label=$2 rc=0
  echo "== ctest: $preset -L $label"
  # Output sizes: the report needs all of it (ctest keeps 1 KiB of a passing test's by default).
  ctest --preset "$preset" -L "^${label}\$" --output-on-failure -j2 \
        --output-junit "$ZAP_REPORTS/$preset.$label.xml" \
        --test-output-size-passed 1000000 --test-output-size-failed 1000000 || rc=$?
  ((rc == 0)) || ZAP_FAILED=1
  ZAP_RUNS+=("$preset:$label:$rc")
}

# zap_report: one table per kind of check (tools/report.py), then the line CI
# reads, "zap: N passed, N failed"; fails when a ctest run failed.
zap_report() {
  echo
  echo "== summary"
  python3 "$ZAP_ROOT/tools/report.py" "$ZAP_REPORTS" "${ZAP_RUNS[@]}" || ZAP_FAILED=1
  return "$ZAP_FAILED"
}
