#!/usr/bin/env bash
# Installs the built tree into a scratch prefix, builds examples/consumer against it with
# find_package(Tandem) and runs it (ctest's installed_consumer). No network, Debian packages only.
set -euo pipefail
build_dir=$1 consumer_src=$2 work=$3
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$consumer_src" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j2 >/dev/null
TANDEM_PROFILE_DIR="$work/prefix/share/tandem/profiles" "$work/build/consumer"
