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
    # Every op and variant (the default op above is allgather_gemm): functional with a trace,
    # timing-only on 8 ranks, timing-only on the A3 profile; the stream-K schedules; dtypes.
    "mas-bulk_sync-func|--op matmul_all_scatter --variant bulk_sync -v Ascend910B1 -n 4 --gm 600 --gk 300 --gn 1024 --bias n"
    "mas-bulk_sync-8|--op matmul_all_scatter --variant bulk_sync -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mas-bulk_sync-a3|--op matmul_all_scatter --variant bulk_sync -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mas-fused_sequential-func|--op matmul_all_scatter --variant fused_sequential -v Ascend910B1 -n 4 --gm 600 --gk 300 --gn 1024 --bias n"
    "mas-fused_sequential-8|--op matmul_all_scatter --variant fused_sequential -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mas-fused_sequential-a3|--op matmul_all_scatter --variant fused_sequential -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mas-producer_consumer-func|--op matmul_all_scatter --variant producer_consumer -v Ascend910B1 -n 4 --gm 600 --gk 300 --gn 1024 --bias n"
    "mas-producer_consumer-8|--op matmul_all_scatter --variant producer_consumer -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mas-producer_consumer-a3|--op matmul_all_scatter --variant producer_consumer -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mas-specialized-func|--op matmul_all_scatter --variant specialized -v Ascend910B1 -n 4 --gm 600 --gk 300 --gn 1024 --bias n"
    "mas-specialized-8|--op matmul_all_scatter --variant specialized -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mas-specialized-a3|--op matmul_all_scatter --variant specialized -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "agm-pull-func|--op all_gather_matmul --variant pull -v Ascend910B1 -n 4 --gm 200 --gk 1024 --gn 150 --bias m"
    "agm-pull-8|--op all_gather_matmul --variant pull -v Ascend910B1 -n 8 --gm 2048 --gk 4096 --gn 2048 --timing-only"
    "agm-pull-a3|--op all_gather_matmul --variant pull -v Ascend910_9372 -n 4 --gm 2048 --gk 4096 --gn 2048 --timing-only"
    "agm-push-func|--op all_gather_matmul --variant push -v Ascend910B1 -n 4 --gm 200 --gk 1024 --gn 150 --bias m"
    "agm-push-8|--op all_gather_matmul --variant push -v Ascend910B1 -n 8 --gm 2048 --gk 4096 --gn 2048 --timing-only"
    "agm-push-a3|--op all_gather_matmul --variant push -v Ascend910_9372 -n 4 --gm 2048 --gk 4096 --gn 2048 --timing-only"
    "agm-staged-func|--op all_gather_matmul --variant staged -v Ascend910B1 -n 4 --gm 200 --gk 1024 --gn 150 --bias m"
    "agm-staged-8|--op all_gather_matmul --variant staged -v Ascend910B1 -n 8 --gm 2048 --gk 4096 --gn 2048 --timing-only"
    "agm-staged-a3|--op all_gather_matmul --variant staged -v Ascend910_9372 -n 4 --gm 2048 --gk 4096 --gn 2048 --timing-only"
    "mar-atomic-func|--op matmul_all_reduce --variant atomic -v Ascend910B1 -n 4 --gm 300 --gk 512 --gn 333"
    "mar-atomic-8|--op matmul_all_reduce --variant atomic -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-atomic-a3|--op matmul_all_reduce --variant atomic -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-one_shot-func|--op matmul_all_reduce --variant one_shot -v Ascend910B1 -n 4 --gm 300 --gk 512 --gn 333"
    "mar-one_shot-8|--op matmul_all_reduce --variant one_shot -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-one_shot-a3|--op matmul_all_reduce --variant one_shot -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-two_shot-func|--op matmul_all_reduce --variant two_shot -v Ascend910B1 -n 4 --gm 300 --gk 512 --gn 333"
    "mar-two_shot-8|--op matmul_all_reduce --variant two_shot -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-two_shot-a3|--op matmul_all_reduce --variant two_shot -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-ring-func|--op matmul_all_reduce --variant ring -v Ascend910B1 -n 4 --gm 300 --gk 512 --gn 333"
    "mar-ring-8|--op matmul_all_reduce --variant ring -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-ring-a3|--op matmul_all_reduce --variant ring -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-ascend-func|--op matmul_all_reduce --variant ascend -v Ascend910B1 -n 4 --gm 300 --gk 512 --gn 333"
    "mar-ascend-8|--op matmul_all_reduce --variant ascend -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-ascend-a3|--op matmul_all_reduce --variant ascend -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-ascend_subtile-func|--op matmul_all_reduce --variant ascend_subtile -v Ascend910B1 -n 4 --gm 300 --gk 512 --gn 333"
    "mar-ascend_subtile-8|--op matmul_all_reduce --variant ascend_subtile -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mar-ascend_subtile-a3|--op matmul_all_reduce --variant ascend_subtile -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 2048 --timing-only"
    "mag-fused-func|--op matmul_all_gather --variant fused -v Ascend910B1 -n 4 --gm 512 --gk 300 --gn 520 --bias m"
    "mag-fused-8|--op matmul_all_gather --variant fused -v Ascend910B1 -n 8 --gm 4096 --gk 2048 --gn 2048 --timing-only"
    "mag-fused-a3|--op matmul_all_gather --variant fused -v Ascend910_9372 -n 4 --gm 4096 --gk 2048 --gn 2048 --timing-only"
    "mrs-tile_owner-func|--op matmul_reduce_scatter --variant tile_owner -v Ascend910B1 -n 4 --gm 200 --gk 300 --gn 1024 --bias n"
    "mrs-tile_owner-8|--op matmul_reduce_scatter --variant tile_owner -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mrs-tile_owner-a3|--op matmul_reduce_scatter --variant tile_owner -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mrs-atomic-func|--op matmul_reduce_scatter --variant atomic -v Ascend910B1 -n 4 --gm 200 --gk 300 --gn 1024 --bias n"
    "mrs-atomic-8|--op matmul_reduce_scatter --variant atomic -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "mrs-atomic-a3|--op matmul_reduce_scatter --variant atomic -v Ascend910_9372 -n 4 --gm 2048 --gk 2048 --gn 4096 --timing-only"
    "gemm-pto_performance-func|--op gemm --variant pto_performance -v Ascend910B1 -n 4 --gm 512 --gk 256 --gn 1536"
    "gemm-pto_performance-8|--op gemm --variant pto_performance -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 3072 --timing-only"
    "gemm-tiled-func|--op gemm --variant tiled -v Ascend910B1 -n 4 --gm 512 --gk 256 --gn 1536"
    "gemm-tiled-8|--op gemm --variant tiled -v Ascend910B1 -n 8 --gm 2048 --gk 2048 --gn 3072 --timing-only"
    "mar-atomic-stream_k-func|--op matmul_all_reduce --variant atomic --schedule stream_k -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 1280"
    "mar-atomic-hybrid-func|--op matmul_all_reduce --variant atomic --schedule hybrid -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 1280"
    "mar-one_shot-stream_k-func|--op matmul_all_reduce --variant one_shot --schedule stream_k -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 1280"
    "mar-one_shot-hybrid-func|--op matmul_all_reduce --variant one_shot --schedule hybrid -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 1280"
    "mas-fused_sequential-stream_k-func|--op matmul_all_scatter --variant fused_sequential --schedule stream_k -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 512"
    "mas-fused_sequential-hybrid-func|--op matmul_all_scatter --variant fused_sequential --schedule hybrid -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 512"
    "mas-specialized-stream_k-func|--op matmul_all_scatter --variant specialized --schedule stream_k -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 512"
    "mas-specialized-hybrid-func|--op matmul_all_scatter --variant specialized --schedule hybrid -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 512"
    "gemm-tiled-stream_k-func|--op gemm --variant tiled --schedule stream_k -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 1280"
    "gemm-tiled-hybrid-func|--op gemm --variant tiled --schedule hybrid -v Ascend910B1 -n 2 --gm 640 --gk 512 --gn 1280"
    "mar-two_shot-bf16-func|--op matmul_all_reduce --variant two_shot -v Ascend910B1 -n 2 --gm 256 --gk 256 --gn 512 --dtype bf16 --out-dtype bf16 --bias m"
    "mas-producer_consumer-fp16out-func|--op matmul_all_scatter --variant producer_consumer -v Ascend910B1 -n 2 --gm 256 --gk 256 --gn 512 --out-dtype fp16"
    "gemm-tiled-1rank-func|--op gemm --variant tiled -v Ascend910B1 -n 1 --gm 300 --gk 520 --gn 500 --bias n"
)

run_side() {  # side binary profile_dir name args...
    local side=$1 bin=$2 pdir=$3 name=$4
    shift 4
    local dir="$work/$side/$name"
    mkdir -p "$dir"
    local extra=(--json "$dir/result.json" --out-dir "$dir/out")
    [[ $name == *-notrace ]] || extra+=(--trace "$dir/trace.json")
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
