#!/usr/bin/env bash
# run.sh: the seed's interface (pto-isa kernels/manual/a2a3/allgather_gemm/run.sh), kept, running
# on Tandem's simulated cluster, for every op of the family (--op). Installs missing Debian
# packages, builds build/tandem (Release) when needed, and runs it with the given flags;
# `./run.sh test` runs the test suite.
# Flag parsing and every shape check live in the binary (host/cli/options.cpp), so there is one
# source of truth; this script only handles what must happen before the binary exists.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_DIR="${TANDEM_BUILD_DIR:-$ROOT/build}"  # override to build elsewhere
BIN="$BUILD_DIR/tandem"
DEFAULT_ARGS=(-r sim -v Ascend910B1 -n 2 --gm 2048 --gk 2048 --gn 1024)

usage() {
  cat <<'EOF'
Usage:
  ./run.sh [--op OP] [--variant V] [--schedule S] [--dtype fp16|bf16] [--out-dtype D] [--bias none|m|n]
           [-r sim|npu] [-v SOC] [-n RANKS] [--gm M] [--gk K] [--gn N]
           [--base-m 128] [--base-n 256] [--compute-blocks B] [--comm-blocks B]
           [--comm-mode mesh|ring] [--timing-only] [--sanitize] [--json FILE] [--trace FILE]
           [--out-dir DIR] [--write-inputs] [--input-dir DIR] [--profile FILE] [--quiet]
  ./run.sh --sweep FILE [--sweep-out PREFIX] [--jobs N] [other flags: the rows' defaults]
  mpirun -n P [--hostfile H] ./run.sh --sweep FILE ...   the rows spread over P processes (docs/SWEEPS.md)
  ./run.sh -n R --gm M --gk K --gn N --tune [--sweep-out PREFIX] [--jobs N]
  ./run.sh test [CTEST_ARGS...]     configure, build everything, run the test suite (ctest)
  ./run.sh fidelity [-v SOC]        every measured row against the simulator, with leave-one-out errors
  ./run.sh --list-ops               the ops, their variants, knobs and constraints
  ./run.sh -h | --help              this help

Fused GEMM + collective ops on a simulated Ascend NPU cluster; with no --op, AllGather+GEMM (the
pto-isa seed). With no flags it runs
  -r sim -v Ascend910B1 -n 2 --gm 2048 --gk 2048 --gn 1024
Defaults: -r sim, -v Ascend910B1, -n 2, --gm 2048 --gk 2048 --gn 1024, --base-m 128,
--base-n 256, --compute-blocks/--comm-blocks = the profile's AIC/AIV core counts (24/48 on
Ascend910B1), --comm-mode mesh, functional (data + verification), --out-dir out.

  -r, --run-mode sim|npu   sim simulates; npu is refused: no Ascend NPU is present here
  -v, --soc-version SOC    profile sim/profiles/<SOC>.toml (Ascend910B1 .. Ascend910B4)
  --profile FILE           a hardware profile TOML file instead of -v's
  -n, --n-ranks N          ranks: 2..32, up to 384 with --timing-only
  --gm/--gk/--gn           GEMM shape: M % (n*base-m) == 0, K % base-n == 0, N % base-n == 0
  --base-m, --base-n       tile: multiples of 16, base-n % 4 == 0, must fit L0C/L0A/L0B/L1/UB
  --compute-blocks B       AIC blocks of the compute kernel, 1..4096 (beyond the cores: waves)
  --comm-blocks B          AIV blocks of the comm kernel, 1..4096 (beyond the cores: waves)
  --comm-mode mesh|ring    mesh: direct sends (published kernel); ring: forwarding ring
  --timing-only            timing model only: no data, no math, no verification
  --sanitize               check synchronisation (races, flags before data, stale flags, unschedulable
                           spinners, disagreeing ranks, out of bounds); a violation exits 4
  --json FILE              results JSON (docs/RESULTS.md)
  --trace FILE             Chrome Trace Event JSON of the pipelined run
  --out-dir DIR            output_rank<r>.bin (and inputs with --write-inputs); default out
  --write-inputs           also write pe_<r>_a.bin, pe_<r>_b.bin, golden.bin to --out-dir
  --input-dir DIR          read the seed's input files from DIR instead of generating them
  --quiet                  print only errors and the summary
  --sweep FILE             run every row of a CSV (header row) or JSON array: ranks, m, k, n and
                           optional base_m, base_n, compute_blocks, comm_blocks, comm_mode,
                           profile, chunk_tiles, timing_only (default true); bad rows are
                           reported by line and skipped; Ctrl-C keeps the finished rows
  --tune                   search chunk size, base tile and block split for the shape given
                           (timing-only); prints the best configuration next to the default
  --sweep-out PREFIX       PREFIX.csv and PREFIX.json of --sweep/--tune (default out/sweep,
                           out/tune with --tune)
  --jobs N                 configurations run at once by --sweep/--tune (default: the cores)

Each flag is described in detail by: build/tandem --help (build/allgather_gemm is the same program)
Seed-format inputs can also be made by: /usr/bin/python3 scripts/gen_data.py --help
EOF
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
configure() {
  quietly cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release ||
    die "configuring the build in $BUILD_DIR failed (cmake output above)"
}

build() {  # build [TARGET]
  local target=()
  [[ $# -gt 0 ]] && target=(--target "$1")
  quietly cmake --build "$BUILD_DIR" -j"$(nproc)" "${target[@]}" ||
    die "building ${1:-the project} failed (compiler output above)"
}

# Installs missing packages, configures, builds TARGET. Under mpirun (`mpirun -n P ./run.sh
# --sweep ...`) every process runs this script at once: a lock in the build directory lets one
# at a time through, and the first one on each host records the job id and host name, so the
# others there find the work done and go straight to the binary.
prepare() {  # prepare TARGET
  local job="${PMIX_NAMESPACE:-${OMPI_MCA_ess_base_jobid:-}}" stamp="$BUILD_DIR/.run_sh_prepared_for_job"
  [[ -n "$job" ]] && job="$job on $(uname -n)"
  if [[ -z "$job" ]]; then
    "$ROOT/scripts/install_deps.sh"
    configure
    build "$1"
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
    case "$arg" in -h | --help) usage; exit 0 ;; esac
  done
  refuse_npu "$@"
  (($# == 0)) && set -- "${DEFAULT_ARGS[@]}"

  prepare tandem
  [[ -x "$BIN" ]] || die "$BIN was not built (is host/cli/main.cpp missing?)"
  exec "$BIN" "$@"
}

main "$@"
