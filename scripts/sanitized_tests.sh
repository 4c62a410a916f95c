#!/usr/bin/env bash
# Builds the test suite with a sanitizer (address = ASan+UBSan, thread = TSan) in its own build
# directory (build-<sanitizer>, or $TANDEM_SANITIZE_BUILD_DIR; about 600 MiB) and runs it.
# Usage: scripts/sanitized_tests.sh address|thread
# Configured without MPI (TANDEM_MPI=OFF): the suite's binary does not link it anyway (MPI is in
# the programs only, tested by ctest's mpi_sweep in the Release build). A one-off build, so built
# the fastest way (CMakeLists.txt): the heavy headers precompiled, the sim, the API and the test
# files in batches.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer="${1:?usage: scripts/sanitized_tests.sh address|thread}"
case "${sanitizer}" in
  address|thread) ;;
  *) echo "unknown sanitizer '${sanitizer}': use address or thread" >&2; exit 2 ;;
esac
scripts/install_deps.sh
dir="${TANDEM_SANITIZE_BUILD_DIR:-build-${sanitizer}}"
log="$(mktemp)"
if ! { cmake -S . -B "${dir}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DTANDEM_SANITIZE="${sanitizer}" -DTANDEM_MPI=OFF \
       -DTANDEM_PCH=ON -DTANDEM_UNITY_BUILD=ON &&
       cmake --build "${dir}" -j"$(nproc)" --target tandem_tests; } >"${log}" 2>&1; then
  cat "${log}"; rm -f "${log}"; exit 1
fi
rm -f "${log}"
echo "(built in ${SECONDS} s)"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
# Tests that re-run the binary pinned to one core, or only measure speed, are skipped here. Under
# ThreadSanitizer the calibration tests (timing-only model checks of large shapes, no threads of
# their own beyond every run's: they take most of its time there) and the largest timing-only
# shapes are skipped too, and so are moe_ffn's functional runs (its conformance runs and its own
# tests: the longest there, one op's data path on the same runtime threads as every other op's):
# the Release and AddressSanitizer runs keep them. Under ThreadSanitizer the conformance run
# (every rank count, dtype and bias, functional) is kept for one variant of each op that has
# several (matmul_all_reduce's atomic, matmul_all_scatter's producer_consumer,
# matmul_reduce_scatter's tile_owner, all_gather_matmul's push): the others run the same runtime
# threads through the same paths (their variant-level data races are the sanitizer's own job in
# the other two runs), and they took ~15% of the suite's time there. Under AddressSanitizer the calibration tests
# that re-run the fitted rows with one profile parameter moved (Calibration.Slower*/Longer*: the
# same code paths as the rows it does run) are skipped; Release keeps them.
filter="-*Pinned*:*Benchmark*"
if [[ "${sanitizer}" == "address" ]]; then
  filter="${filter}:Calibration.Slower*:Calibration.Longer*"
fi
if [[ "${sanitizer}" == "thread" ]]; then
  filter="${filter}:Calibration.*:*DefaultShapeTimingOnly*:CalendarReference.LongRunAhead*"
  filter="${filter}:*/moe_ffn__*:MoeFfn.*:MoeReplicas.*"
  for variant in matmul_all_reduce__one_shot matmul_all_reduce__two_shot matmul_all_reduce__ring \
                 matmul_all_scatter__fused_sequential matmul_all_scatter__bulk_sync matmul_all_scatter__specialized \
                 matmul_reduce_scatter__atomic all_gather_matmul__pull all_gather_matmul__staged; do
    filter="${filter}:Registry/OpConformance.*/${variant}"
  done
fi
filter="${TANDEM_SANITIZE_FILTER:-${filter}}"
# The suite in two shards per host core, in parallel (most tests keep a core busy at best under a
# sanitizer; gtest deals tests to shards by index, so more shards than cores even out the long
# ones), each shard's failures printed; any failure fails the run.
shards="$((2 * $(nproc)))"
pids=()
for ((i = 0; i < shards; ++i)); do
  GTEST_TOTAL_SHARDS="${shards}" GTEST_SHARD_INDEX="${i}" \
    "${dir}/tests/tandem_tests" --gtest_brief=1 --gtest_filter="${filter}" &
  pids+=("$!")
done
status=0
for pid in "${pids[@]}"; do
  wait "${pid}" || status=1
done
echo "(tests run, ${SECONDS} s in all)"
exit "${status}"
