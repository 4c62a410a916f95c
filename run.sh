#!/usr/bin/env bash
# run.sh: the seed's interface (pto-isa kernels/manual/a2a3/allgather_gemm/run.sh), kept, running
# on Tandem's simulated cluster, for every op of the family (--op). Installs missing Debian
# packages, builds build/tandem (Release) when needed, and runs it with the given flags;
# `./run.sh test` runs the test suite.
# Flag parsing, every check and the flags' help live in the binary (its flags are the parameter
# schema's, host/params/param_schema.cpp; host/cli/options.cpp builds them), so there is one
# source of truth: `./run.sh --help` prints the binary's help after the few commands this script
# adds; this script only handles what must happen before the binary exists.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_DIR="${TANDEM_BUILD_DIR:-$ROOT/build}"  # override to build elsewhere
BIN="$BUILD_DIR/tandem"

# What run.sh adds to the binary; the flags themselves are the binary's --help (usage_flags).
usage_commands() {
  cat <<'EOF'
Usage:
  ./run.sh [FLAGS]                  build/tandem with FLAGS (none: the seed's AllGather+GEMM, 2 ranks,
                                    2048 x 2048 x 1024, functional)
  ./run.sh --sweep FILE [FLAGS]     every row of FILE; FLAGS are the rows' defaults
  mpirun -n P [--hostfile H] ./run.sh --sweep FILE ...   the rows spread over P processes (docs/SWEEPS.md)
  ./run.sh -n R --gm M --gk K --gn N --tune
  ./run.sh --list-ops               the ops, their variants, knobs and constraints
  ./run.sh test [CTEST_ARGS...]     configure, build everything, run the test suite (ctest)
  ./run.sh fidelity [-v SOC]        every measured row against the simulator, with leave-one-out errors
  ./run.sh fidelity --uncertainty   ... and how far each prediction moves under the fits' leave-one-out
                                    values and the assumed parameters' ranges (a few minutes)
  ./run.sh fidelity --set KEY=VALUE --rows REGEX
                                    a what-if: the rows matching REGEX on the profile with KEY changed
  ./run.sh -h | --help              this help, then the binary's (every flag, its default and rules;
                                    docs/PARAMETERS.md)
Seed-format inputs can also be made by: /usr/bin/python3 scripts/gen_data.py --help

FLAGS (build/tandem --help; build/allgather_gemm is the same program):
EOF
}

# The binary's own help: built first when it is not there yet (a fresh clone).
usage_flags() {
  if [[ ! -x "$BIN" ]]; then
    echo "(building $BIN for its help: the first run of ./run.sh builds it anyway)" >&2
    prepare tandem
  fi
  "$BIN" --help
}

die() {
  echo "[ERROR] $*" >&2
  exit 1
}

# Runs a command with its output hidden, showing the output only if the command fails.
quietly() {
  local log status=0
  log="$(mktemp)"
  "$@" >"$log" 2>&1 || status=$?
  if ((status != 0)); then cat "$log" >&2; fi
  rm -f "$log"
  return "$status"
}

# Configures build/ as a Release build. Always run: it is quick once configured, and it picks up
# files added since (CMake decides at configure time whether host/cli/main.cpp exists).
# A CI machine builds once, from a fresh clone: there the sources are compiled in batches (a unity
# build, CMakeLists.txt), which is faster for one full build and slower for a developer's small
# changes, so only a fresh build directory under CI=true gets it.
configure() {
  local extra=()
  [[ "${CI:-}" == "true" && ! -f "$BUILD_DIR/CMakeCache.txt" ]] && extra=(-DTANDEM_UNITY_BUILD=ON)
  quietly cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${extra[@]}" ||
    die "configuring the build in $BUILD_DIR failed (cmake output above)"
}

build() {  # build [TARGET]
  local target=()
  [[ $# -gt 0 ]] && target=(--target "$1")
  quietly cmake --build "$BUILD_DIR" -j"$(nproc)" "${target[@]}" ||
    die "building ${1:-the project} failed (compiler output above)"
}

# When the last build through this script started, every input of the binary was as it is now
# if none is newer than this stamp (made when that build started, kept when it succeeded).
BUILT_STAMP="$BUILD_DIR/.run_sh_built"

# Whether build/tandem is current: it exists, and no build input (a source, a header, a CMake
# file, a profile, or a folder: adding or removing a file changes its folder's time) changed
# since the build that made it started. Then nothing is installed, configured or built, and
# ./run.sh costs what the binary costs (a shell loop over shapes pays nothing per run).
binary_is_current() {
  [[ -x "$BIN" && -f "$BUILT_STAMP" && -f "$BUILD_DIR/CMakeCache.txt" ]] || return 1
  local changed
  changed="$(find "$ROOT/CMakeLists.txt" "$ROOT/cmake" "$ROOT/sim" "$ROOT/kernels" "$ROOT/host" "$ROOT/api" \
    "$ROOT/include" "$ROOT/scripts/install_deps.sh" -newer "$BUILT_STAMP" -print -quit 2>/dev/null)" || return 1
  [[ -z "$changed" ]]
}

# Installs missing packages, configures, builds TARGET, and marks the build current. Under mpirun (`mpirun -n P ./run.sh
# --sweep ...`) every process runs this script at once: a lock in the build directory lets one
# at a time through, and the first one on each host records the job id and host name, so the
# others there find the work done and go straight to the binary.
prepare() {  # prepare TARGET
  local job="${PMIX_NAMESPACE:-${OMPI_MCA_ess_base_jobid:-}}" stamp="$BUILD_DIR/.run_sh_prepared_for_job"
  [[ -n "$job" ]] && job="$job on $(uname -n)"
  if [[ -z "$job" ]]; then
    mkdir -p "$BUILD_DIR"
    RUN_SH_STARTED="$(mktemp "$BUILD_DIR/.run_sh_started.XXXXXX")"
    trap 'rm -f "$RUN_SH_STARTED"' EXIT  # a failed build leaves no stamp behind
    "$ROOT/scripts/install_deps.sh"
    configure
    build "$1"
    mv -f "$RUN_SH_STARTED" "$BUILT_STAMP"
    return
  fi
  mkdir -p "$BUILD_DIR"
  exec 9>"$BUILD_DIR/.run_sh.lock"
  flock 9
  if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$job" ]]; then
    "$ROOT/scripts/install_deps.sh"
    configure
    build "$1"
    echo "$job" >"$stamp"
  fi
  flock -u 9
  exec 9>&-
}

# -r npu fails before anything is installed or built (the binary says the same).
refuse_npu() {
  local prev=""
  for arg in "$@"; do
    case "$prev|$arg" in
      -r\|npu | --run-mode\|npu | *\|-rnpu | *\|--run-mode=npu)
        die "-r npu: no Ascend NPU is present on this machine; Tandem simulates one: use -r sim" ;;
    esac
    prev="$arg"
  done
}

main() {
  if [[ "${1:-}" == "test" ]]; then
    shift
    "$ROOT/scripts/install_deps.sh"
    configure
    build
    exec ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 "$@"
  fi
  if [[ "${1:-}" == "fidelity" ]]; then
    shift
    "$ROOT/scripts/install_deps.sh"
    configure
    build tandem
    build tget_bandwidth_bench
    exec /usr/bin/python3 "$ROOT/scripts/fidelity.py" --binary "$BIN" \
      --tget-binary "$BUILD_DIR/tests/tget_bandwidth_bench" "$@"
  fi
  for arg in "$@"; do
    case "$arg" in -h | --help) usage_commands; usage_flags; exit 0 ;; esac
  done
  refuse_npu "$@"

  binary_is_current || prepare tandem
  [[ -x "$BIN" ]] || die "$BIN was not built (is host/cli/main.cpp missing?)"
  exec "$BIN" "$@"
}

main "$@"
