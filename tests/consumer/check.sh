#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds and runs tests/consumer in a scratch directory, consuming zap one way:
#   check.sh MODE <zap build dir> <zap source dir> <C++ compiler> <zap version>
#   check.sh --warnings <C++ compiler>    prints the strict warning flags (tests/CMakeLists.txt)
# MODE:
#   add_subdirectory, fetchcontent   through CMake, from the source tree
#   find_package        cmake --install into a scratch prefix, then
#                       find_package(zap <major>.<minor> CONFIG): the version
#                       file accepts it and the header says the same version
#   find_package_newer  the same, asking for the next major version: CMake
#                       must refuse it (a new major version may break programs)
#   pkg-config          cmake --install, then the compiler with nothing but
#                       `pkg-config --cflags --libs zap` (no -std of our own:
#                       zap.pc must carry what a program needs), as a Makefile
#                       user would; zap.pc's Version is the project's
#   cxx17               each public header a program may include alone
#                       (<zap/zap.hpp>, and <zap/execution.hpp> once it
#                       exists) compiled as C++17 and in the compiler's
#                       default mode: it must stop with a single error, and
#                       that error names C++20
#   tsan                cmake --install, then the program built as pkg-config
#                       does with -fsanitize=thread and warnings as errors (g++
#                       12 warns about fences under TSan: -Wtsan), run under
#                       ThreadSanitizer with the installed suppression file;
#                       the portable platform compiled the same way
# Every mode but cxx17 and find_package_newer runs the program, which prints
# "zap consumer: ok"; those two print it themselves when the compiler or
# CMake refused as it must.
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

mode=$1 build=$2 source=$3 compiler=$4 version=$5
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
read -r -a strict <<<"$(strict_warnings "$compiler")"
echo "consumer: $mode, $compiler ${strict[*]}"
major=${version%%.*}
minor=${version#*.}
minor=${minor%%.*}

# run LOG COMMAND...: the command's output only when it fails.
run() {
    local log=$scratch/$1
    shift
    "$@" >"$log" 2>&1 || { cat "$log"; exit 1; }
}

# refused LOG PATTERN COMMAND...: the command must fail and its output match PATTERN.
refused() {
    local log=$scratch/$1 pattern=$2
    shift 2
    if "$@" >"$log" 2>&1; then
        cat "$log"
        echo "FAILED: this was accepted: $*"
        exit 1
    fi
    # CMake wraps its messages: lines joined, runs of blanks made one.
    tr -s ' \n' '  ' <"$log" | grep -q -- "$pattern" ||
        { cat "$log"; echo "FAILED: the refusal does not say '$pattern'"; exit 1; }
}

# install: zap installed into the scratch prefix, its zap.pc on PKG_CONFIG_PATH.
install() {
    run install.log cmake --install "$build" --prefix "$scratch/prefix"
    export PKG_CONFIG_PATH
    PKG_CONFIG_PATH=$(dirname "$(find "$scratch/prefix" -name zap.pc)")
}

# configure CMAKE-ARGS...: the consumer project configured in $scratch/build.
configure() {
    cmake -S "$source/tests/consumer" -B "$scratch/build" -DCMAKE_CXX_COMPILER="$compiler" \
          -DCONSUMER_WARNINGS="${strict[*]}" "$@"
}

# build_with_pkg_config FLAGS...: consumer.cpp compiled and linked with the
# flags given, pkg-config's and nothing else.
build_with_pkg_config() {
    local cflags libs
    read -r -a cflags <<<"$(pkg-config --cflags zap)"
    read -r -a libs <<<"$(pkg-config --libs zap)"
    mkdir -p "$scratch/build"
    run build.log "$compiler" "$@" "${strict[@]}" "${cflags[@]}" "$source/tests/consumer/consumer.cpp" \
        -o "$scratch/build/consumer" "${libs[@]}"
}

# The headers a program may include alone (docs/api.md), where they exist.
public_headers=(zap.hpp execution.hpp)

# one_error_naming_cxx20 HEADER FLAGS...: <zap/HEADER> compiled with FLAGS
# must fail with exactly one error, which names C++20.
one_error_naming_cxx20() {
    local header=$1 log=$scratch/$1.log
    shift
    refused "$header.log" "C++20" "$compiler" "$@" -I"$source/src" -x c++ -fsyntax-only - <<<"#include <zap/$header>"
    local errors
    errors=$(grep -c "error:" "$log" || true)
    if [[ $errors != 1 ]] || ! grep "error:" "$log" | grep -q "C++20"; then
        cat "$log"
        echo "FAILED: <zap/$header>, $compiler $*: $errors errors; one, naming C++20, expected"
        exit 1
    fi
    echo "<zap/$header>, $compiler ${*:-(default mode)}: $(grep "error:" "$log")"
}

case $mode in
    add_subdirectory | fetchcontent)
        run configure.log configure -DZAP_CONSUME="$mode" -DZAP_SOURCE_DIR="$source"
        run build.log cmake --build "$scratch/build"
        ;;
    find_package)
        install
        run configure.log configure -DZAP_CONSUME=find_package -DCMAKE_PREFIX_PATH="$scratch/prefix" \
            -DZAP_FIND_VERSION="$major.$minor"
        run build.log cmake --build "$scratch/build"
        ;;
    find_package_newer)
        install
        refused configure.log "compatible with requested version \"$((major + 1)).0\"" \
            configure -DZAP_CONSUME=find_package -DCMAKE_PREFIX_PATH="$scratch/prefix" \
            -DZAP_FIND_VERSION="$((major + 1)).0"
        echo "find_package(zap $((major + 1)).0 CONFIG) refused zap $version"
        echo "zap consumer: ok"
        exit 0
        ;;
    pkg-config)
        install
        [[ $(pkg-config --modversion zap) == "$version" ]] ||
            { echo "FAILED: zap.pc says version $(pkg-config --modversion zap), the project $version"; exit 1; }
        build_with_pkg_config
        ;;
    cxx17)
        for header in "${public_headers[@]}"; do
            [[ -f $source/src/zap/$header ]] || continue
            one_error_naming_cxx20 "$header" -std=c++17
            one_error_naming_cxx20 "$header"
        done
        echo "zap consumer: ok"
        exit 0
        ;;
    tsan)
        install
        build_with_pkg_config -fsanitize=thread -g -O1
        read -r -a cflags <<<"$(pkg-config --cflags zap)"
        run portable.log "$compiler" -fsanitize=thread -O1 -DZAP_PORTABLE_PLATFORM "${strict[@]}" "${cflags[@]}" \
            -c "$source/tests/consumer/consumer.cpp" -o "$scratch/portable.o"
        suppressions=$(pkg-config --variable=tsan_suppressions zap)
        [[ -f $suppressions ]] || { echo "FAILED: zap.pc names $suppressions, which was not installed"; exit 1; }
        export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$suppressions"
        ;;
    *)
        echo "unknown mode $mode" >&2
        exit 2
        ;;
esac
"$scratch/build/consumer"
