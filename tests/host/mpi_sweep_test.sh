#!/usr/bin/env bash
# ctest mpi_sweep: a small timing-only sweep run by one process and by `mpirun -n 2
# --oversubscribe` must give byte-identical PREFIX.csv and PREFIX.json, with both processes
# running rows, the bad row reported once (by rank 0) and the same exit code (1: a bad row).
# Then the same for --tune: files byte-identical, the same best configuration, every
# configuration run once over the two processes.
# Skipped (exit 77) when the build has no MPI or mpirun is missing.
# Usage: mpi_sweep_test.sh TANDEM_BIN WITH_MPI(ON|OFF) MPIEXEC WORK_DIR
set -euo pipefail
bin="$1" with_mpi="$2" mpiexec="$3" work="$4"

if [[ "$with_mpi" != "ON" ]]; then
  echo "SKIPPED: this build has no MPI (TANDEM_MPI=OFF, or libopenmpi-dev was not found at configure time)"
  exit 77
fi
if [[ -z "$mpiexec" || "$mpiexec" == *NOTFOUND* || ! -x "$mpiexec" ]]; then
  mpiexec="$(command -v mpirun || true)"
fi
if [[ -z "$mpiexec" ]]; then
  echo "SKIPPED: mpirun is not installed (Debian: openmpi-bin)"
  exit 77
fi
# Open MPI refuses to run as root unless told it may (containers and CI run as root).
if [[ "$(id -u)" == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# Containers often forbid the cross-process memory reads (ptrace) of Open MPI's shared-memory
# single-copy path; plain copies work everywhere, and these messages are small.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

# PREFIX.csv and PREFIX.json of the one-process run and the mpirun -n 2 run, byte for byte.
same_files() {
  local name="$1" ext
  for ext in csv json; do
    if ! cmp "single/$name.$ext" "mpi/$name.$ext"; then
      echo "FAIL: $name.$ext differs between one process and mpirun -n 2"
      diff "single/$name.$ext" "mpi/$name.$ext" | head -20
      exit 1
    fi
  done
}

rm -rf "$work"
mkdir -p "$work"
cd "$work"
# Six good rows of different cost (shapes, ranks, ring and mesh) and one bad row (M not a
# multiple of ranks * base_m).
cat > rows.csv <<'ROWS'
ranks,m,k,n,comm_mode
2,2048,1024,1024,mesh
4,4096,2048,1024,ring
8,4096,1024,2048,mesh
2,1000,1024,1024,mesh
2,1024,512,512,ring
4,2048,2048,2048,mesh
8,8192,1024,1024,ring
ROWS

status=0
"$bin" --sweep rows.csv --sweep-out single/sweep --jobs 1 >single.out 2>single.err || status=$?
[[ $status == 1 ]] || { echo "FAIL: single-process sweep exited $status, expected 1 (one bad row)"; cat single.err; exit 1; }

status=0
timeout 120 "$mpiexec" -n 2 --oversubscribe "$bin" --sweep rows.csv --sweep-out mpi/sweep --jobs 2 >mpi.out 2>mpi.err || status=$?
[[ $status == 1 ]] || { echo "FAIL: mpirun -n 2 sweep exited $status, expected 1 (one bad row)"; cat mpi.out mpi.err; exit 1; }

same_files sweep
rows=$(($(wc -l <mpi/sweep.csv) - 1))
[[ $rows == 6 ]] || { echo "FAIL: mpi/sweep.csv has $rows rows, expected 6"; exit 1; }

bad=$(grep -c "line 5: " mpi.err || true)
[[ $bad == 1 ]] || { echo "FAIL: the bad row (line 5) was reported $bad times under mpirun, expected once (rank 0)"; cat mpi.err; exit 1; }

# Every row was run once: "over 2 MPI processes (rows by rank: A B)", A + B = 6. Which process
# ran how many depends on host timing (rank 0 hands rows out on request and runs rows itself; on
# a loaded machine rank 1 may start after rank 0 has taken every row), so B = 0 is only noted.
by_rank=$(sed -n 's/.*over 2 MPI processes (rows by rank: \([0-9]*\) \([0-9]*\)).*/\1 \2/p' mpi.out)
read -r on0 on1 <<<"${by_rank:-x x}"
if [[ "$on0" == x || $((on0 + on1)) != 6 ]]; then
  echo "FAIL: rows by rank '${by_rank}', expected 6 rows in all"
  cat mpi.out
  exit 1
fi
[[ $on1 -ge 1 ]] || echo "NOTE: rank 1 ran no row this time (rank 0 took them all before rank 1 asked)"
echo "sweep: 6 rows, byte-identical files; rows by rank: $on0 $on1"

# --tune over two processes: both stages spread. Written --tune=true: Open MPI's mpirun takes a
# bare `--tune X` anywhere on its command line as its own option (X: a parameter file).
tune_args=(--tune=true --op matmul_all_reduce -n 2 --gm 1024 --gk 1024 --gn 1024 --quiet)
status=0
"$bin" "${tune_args[@]}" --sweep-out single/tune --jobs 1 >tune_single.out 2>tune_single.err || status=$?
[[ $status == 0 ]] || { echo "FAIL: single-process tune exited $status"; cat tune_single.err; exit 1; }
status=0
timeout 120 "$mpiexec" -n 2 --oversubscribe "$bin" "${tune_args[@]}" --sweep-out mpi/tune --jobs 1 \
  >tune_mpi.out 2>tune_mpi.err || status=$?
[[ $status == 0 ]] || { echo "FAIL: mpirun -n 2 tune exited $status"; cat tune_mpi.out tune_mpi.err; exit 1; }
same_files tune
if [[ "$(grep '^  Best:' tune_single.out)" != "$(grep '^  Best:' tune_mpi.out)" ]]; then
  echo "FAIL: the best configuration differs"; cat tune_single.out tune_mpi.out; exit 1
fi
configs=$(($(wc -l <mpi/tune.csv) - 1))
by_rank=$(sed -n 's/.*2 MPI processes (configurations by rank: \([0-9]*\) \([0-9]*\)).*/\1 \2/p' tune_mpi.out)
read -r t0 t1 <<<"${by_rank:-x x}"
if [[ "$t0" == x || $((t0 + t1)) != "$configs" ]]; then
  echo "FAIL: configurations by rank '${by_rank}', expected $configs in all"
  cat tune_mpi.out
  exit 1
fi
[[ $t1 -ge 1 ]] || echo "NOTE: rank 1 ran no tune configuration this time"
echo "PASS: sweep 6 rows (by rank: $on0 $on1), tune $configs configurations (by rank: $t0 $t1), files byte-identical"
