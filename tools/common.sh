# Shared by tools/verify and tools/test: installs what is missing, builds a
# preset, runs ctest labels and keeps a summary. Sourced, not run.
set -euo pipefail

ZAP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ZAP_SUMMARY=()
ZAP_FAILED=0

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

# zap_build PRESET: configure and build with at most two jobs (the machine has two cores).
zap_build() {
  local preset=$1
  echo "== build: $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j2
}

# zap_ctest PRESET LABEL [PATTERN]: runs one label and records its result in
# the summary; with PATTERN, runs verbosely and also keeps the output lines
# that match it (models explored, TLA+ states).
zap_ctest() {
  local preset=$1 label=$2 pattern=${3:-} log verbose=()
  log=$(mktemp)
  [ -n "$pattern" ] && verbose=(--verbose)
  echo "== ctest: $preset -L $label"
  if ctest --preset "$preset" -L "^${label}\$" --output-on-failure -j2 "${verbose[@]}" 2>&1 | tee "$log"; then
    ZAP_SUMMARY+=("$preset/$label: $(grep -E 'tests passed|No tests were found' "$log" | tail -1)")
  else
    ZAP_FAILED=1
    ZAP_SUMMARY+=("$preset/$label: FAILED: $(grep -E 'tests passed' "$log" | tail -1)")
  fi
  if [ -n "$pattern" ]; then
    while IFS= read -r line; do ZAP_SUMMARY+=("    $line"); done < <(grep -E "$pattern" "$log" | sed -E 's/^[0-9]+: //')
  fi
  local ran failed
  ran=$(grep -oE 'tests failed out of [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$' || true)
  failed=$(grep -oE '[0-9]+ tests failed out of' "$log" | tail -1 | grep -oE '^[0-9]+' || true)
  ZAP_RAN=$((${ZAP_RAN:-0} + ${ran:-0}))
  ZAP_FAILS=$((${ZAP_FAILS:-0} + ${failed:-0}))
  rm -f "$log"
}

zap_report() {
  echo
  echo "== summary"
  printf '%s\n' "${ZAP_SUMMARY[@]}"
  echo "zap: $((${ZAP_RAN:-0} - ${ZAP_FAILS:-0})) passed, ${ZAP_FAILS:-0} failed"
  return "$ZAP_FAILED"
}
