#!/usr/bin/env bash
# Installs the built tree into a scratch prefix, builds examples/consumer against it with
# find_package(Tandem) and runs it (ctest's installed_consumer). No network, Debian packages only.
set -euo pipefail
build_dir=$1 consumer_src=$2 work=$3
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$consumer_src" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" -j2 >/dev/null
# The installed library finds the profiles installed with it, without TANDEM_PROFILE_DIR:
env -u TANDEM_PROFILE_DIR "$work/build/consumer"
# ... those and not the source tree's: without its profile there, it says where it looked.
rm "$work/prefix/share/tandem/profiles/Ascend910B1.toml"
if out=$(env -u TANDEM_PROFILE_DIR "$work/build/consumer" 2>&1); then
    echo "FAIL: the consumer ran without the installed Ascend910B1.toml (profiles read from elsewhere)"; exit 1
fi
case "$out" in
    *"$work/prefix/share/tandem/profiles"*) ;;
    *) echo "FAIL: expected the installed profile directory in the error, got: $out"; exit 1 ;;
esac
TANDEM_PROFILE_DIR="$(cd "$(dirname "$0")/../../sim/profiles" && pwd)" "$work/build/consumer"
