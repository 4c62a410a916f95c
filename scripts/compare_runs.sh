#!/usr/bin/env bash
# Byte-identity check between two builds of tandem (or allgather_gemm, the same program): runs
# the same configurations with each, for every op and variant (results JSON, Chrome trace,
# stdout minus the host-time line, and in functional mode the output_rank<r>.bin files) and
# compares the files with cmp. Used to show that a change to the simulator's machinery or to the
# ops' structure (not their model) leaves every result and trace as it was.
#
#   scripts/compare_runs.sh BASE_BINARY NEW_BINARY [WORK_DIR]
#
# BASE_PROFILE_DIR / NEW_PROFILE_DIR (optional) set TANDEM_PROFILE_DIR for each side, for a base
# binary built in another checkout. Exit status 0 when every file matched, 1 otherwise.
# COMPARE_RUNS_LIST=1 prints the configurations (NAME|ARGUMENTS) and runs nothing.
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 BASE_BINARY NEW_BINARY [WORK_DIR]" >&2
    exit 2
fi
base=$1
new=$2
work=${3:-$(mktemp -d /tmp/tandem_compare.XXXXXX)}
mkdir -p "$work"

# name | arguments (each run also gets --json and, unless the name ends in -notrace, --trace)
configs=(
    "mesh2-func|-v Ascend910B1 -n 2 --gm 2048 --gk 2048 --gn 1024"
    "mesh4-func|-v Ascend910B1 -n 4 --gm 2048 --gk 1024 --gn 1024"
    "mesh2|-v Ascend910B1 -n 2 --gm 4096 --gk 4096 --gn 2048 --timing-only"
    "mesh4|-v Ascend910B1 -n 4 --gm 4096 --gk 4096 --gn 4096 --timing-only"
    "mesh8|-v Ascend910B1 -n 8 --gm 8192 --gk 4096 --gn 2048 --timing-only"
    "mesh8-fewblocks|-v Ascend910B1 -n 8 --gm 4096 --gk 2048 --gn 1024 --comm-blocks 5 --compute-blocks 30 --timing-only"
    "ring4-a2|-v Ascend910B1 -n 4 --gm 4096 --gk 2048 --gn 1536 --comm-mode ring --timing-only"
    "ring2-a3|-v Ascend910_9372 -n 2 --gm 2048 --gk 2048 --gn 1024 --comm-mode ring"
    "ring4-a3|-v Ascend910_9372 -n 4 --gm 4096 --gk 4096 --gn 2048 --comm-mode ring --timing-only"
    "ring8-a3|-v Ascend910_9372 -n 8 --gm 8192 --gk 4096 --gn 2048 --comm-mode ring --timing-only"
    "mesh8-a3|-v Ascend910_9372 -n 8 --gm 4096 --gk 2048 --gn 1024 --timing-only"
    "mesh32-notrace|-v Ascend910B1 -n 32 --gm 8192 --gk 4096 --gn 4096 --timing-only"
    "ring32-a3-notrace|-v Ascend910_9372 -n 32 --gm 8192 --gk 4096 --gn 4096 --comm-mode ring --timing-only"
)

# Every op and variant, from the new binary's `--list-ops --json` (no op is listed here by hand):
# functional at its test shape on 4 ranks (with a bias where it takes one), timing-only at its
# bench shape on 8 ranks and on the A3 ring profile's 4, each further schedule functional on 2
# ranks, and its second input dtype (with that output dtype when it writes it) on 2 ranks.
op_configs() {  # op_configs BINARY
    "$1" --list-ops --json /dev/stdout | /usr/bin/python3 "$(dirname "$0")/compare_runs_configs.py"
}

run_side() {  # side binary profile_dir name args...
    local side=$1 bin=$2 pdir=$3 name=$4
    shift 4
    local dir="$work/$side/$name"
    mkdir -p "$dir"
    local extra=(--json "$dir/result.json" --out-dir "$dir/out")
    # Every rank's trace (a list: binaries before `--trace-ranks all` take it too).
    local ranks=2 prev=""
    for arg in "$@"; do [[ $prev == -n ]] && ranks=$arg; prev=$arg; done
    [[ $name == *-notrace ]] || extra+=(--trace "$dir/trace.json" --trace-ranks "$(seq -s, 0 $((ranks - 1)))")
    if [ -n "$pdir" ]; then
        TANDEM_PROFILE_DIR=$pdir "$bin" "$@" "${extra[@]}" >"$dir/stdout.raw" 2>&1
    else
        "$bin" "$@" "${extra[@]}" >"$dir/stdout.raw" 2>&1
    fi
    echo $? >"$dir/exit_code"
    # The host-time line is the one thing that is meant to differ.
    grep -v 'of host time' "$dir/stdout.raw" | sed "s|$dir|DIR|g" >"$dir/stdout.txt"
    rm -f "$dir/stdout.raw"
}

if ! generated="$(op_configs "$new")" || [ -z "$generated" ]; then
    echo "$new --list-ops --json /dev/stdout gave no configuration" >&2
    exit 2
fi
while IFS= read -r line; do configs+=("$line"); done <<<"$generated"
if [ "${COMPARE_RUNS_LIST:-}" = 1 ]; then  # the configurations only (tests/python/scripts/test_docs_figures.py)
    printf '%s\n' "${configs[@]}"
    exit 0
fi

status=0
for entry in "${configs[@]}"; do
    name=${entry%%|*}
    read -r -a args <<<"${entry#*|}"
    run_side base "$base" "${BASE_PROFILE_DIR:-}" "$name" "${args[@]}"
    run_side new "$new" "${NEW_PROFILE_DIR:-}" "$name" "${args[@]}"
    files=$(cd "$work/base/$name" && find . -type f | sort)
    if [ "$files" != "$(cd "$work/new/$name" && find . -type f | sort)" ]; then
        echo "DIFFER  $name: not the same files"
        status=1
        continue
    fi
    same=1
    for f in $files; do
        if ! cmp -s "$work/base/$name/$f" "$work/new/$name/$f"; then
            echo "DIFFER  $name: $f"
            same=0
        fi
    done
    if [ $same = 1 ]; then
        echo "same    $name ($(echo "$files" | wc -w) files: $(echo $files | tr '\n' ' '))"
    else
        status=1
    fi
done
# What the ops describe of themselves (--list-ops: variants, docs, constraints, knobs, defaults).
mkdir -p "$work/base" "$work/new"
"$base" --list-ops >"$work/base/list-ops.txt" 2>&1
"$new" --list-ops >"$work/new/list-ops.txt" 2>&1
if cmp -s "$work/base/list-ops.txt" "$work/new/list-ops.txt"; then
    echo "same    --list-ops"
else
    echo "DIFFER  --list-ops"
    status=1
fi
echo "outputs in $work"
exit $status
