#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds and runs tests/consumer in a scratch directory, consuming zap one way:
#   check.sh add_subdirectory|fetchcontent|find_package|pkg-config <zap build dir> <zap source dir> <C++ compiler>
#   check.sh --warnings <C++ compiler>    prints the strict warning flags (tests/CMakeLists.txt)
# find_package and pkg-config first install the build tree into a scratch
# prefix (cmake --install); pkg-config then compiles consumer.cpp with the
# flags `pkg-config --cflags --libs zap` gives, as a Makefile user would.
#
# A header-only library is compiled with its users' warnings: the consumer
# is built with the strict set below, warnings as errors.
set -euo pipefail

# strict_warnings COMPILER: the flags, one line.
strict_warnings() {
    local flags=(-Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror)
    if "$1" --version | grep -q "Free Software Foundation"; then
        flags+=(-Wuseless-cast)  # g++ only
    fi
    echo "${flags[*]}"
}
if [[ $1 == --warnings ]]; then
    strict_warnings "$2"
    exit 0
fi

mode=$1 build=$2 source=$3 compiler=$4
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
read -r -a strict <<<"$(strict_warnings "$compiler")"
echo "consumer: $mode, $compiler ${strict[*]}"

# run LOG COMMAND...: the command's output only when it fails.
run() {
    local log=$scratch/$1
    shift
    "$@" >"$log" 2>&1 || { cat "$log"; exit 1; }
}

if [[ $mode == find_package || $mode == pkg-config ]]; then
    run install.log cmake --install "$build" --prefix "$scratch/prefix"
fi
if [[ $mode == pkg-config ]]; then
    export PKG_CONFIG_PATH
    PKG_CONFIG_PATH=$(dirname "$(find "$scratch/prefix" -name zap.pc)")
    read -r -a cflags <<<"$(pkg-config --cflags zap)"
    read -r -a libs <<<"$(pkg-config --libs zap)"
    mkdir -p "$scratch/build"
    run build.log "$compiler" -std=c++20 "${strict[@]}" "${cflags[@]}" "$source/tests/consumer/consumer.cpp" \
        -o "$scratch/build/consumer" "${libs[@]}"
else
    args=(-DZAP_CONSUME="$mode" -DCMAKE_CXX_COMPILER="$compiler" -DCONSUMER_WARNINGS="${strict[*]}")
    if [[ $mode == find_package ]]; then
        args+=(-DCMAKE_PREFIX_PATH="$scratch/prefix")
    else
        args+=(-DZAP_SOURCE_DIR="$source")
    fi
    run configure.log cmake -S "$source/tests/consumer" -B "$scratch/build" "${args[@]}"
    run build.log cmake --build "$scratch/build"
fi
"$scratch/build/consumer"
