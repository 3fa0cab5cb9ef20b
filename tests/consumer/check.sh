#!/usr/bin/env bash
# Builds and runs tests/consumer in a scratch directory, consuming zap one way:
#   check.sh add_subdirectory|fetchcontent|find_package <zap build dir> <zap source dir> <C++ compiler>
# find_package first installs the build tree into a scratch prefix (cmake --install).
set -euo pipefail
mode=$1 build=$2 source=$3 compiler=$4
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
args=(-DZAP_CONSUME="$mode" -DCMAKE_CXX_COMPILER="$compiler")
if [[ $mode == find_package ]]; then
    cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
    args+=(-DCMAKE_PREFIX_PATH="$scratch/prefix")
else
    args+=(-DZAP_SOURCE_DIR="$source")
fi
cmake -S "$source/tests/consumer" -B "$scratch/build" "${args[@]}" >"$scratch/configure.log" ||
    { cat "$scratch/configure.log"; exit 1; }
cmake --build "$scratch/build" >"$scratch/build.log" || { cat "$scratch/build.log"; exit 1; }
"$scratch/build/consumer"
