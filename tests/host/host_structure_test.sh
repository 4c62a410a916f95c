#!/usr/bin/env bash
# The structure host/ is meant to have, checked on the source (ctest's host_structure):
#  1. host/ and api/ know no op by name: what an op needs differently is a field of its OpDesc
#     (kernels/op_desc.hpp), so no registered op's name appears there as a string literal; nor in
#     the Python package (python/tandem/) or its module (python/tandem_module.cpp), which read
#     what differs from the op's description (ops.info);
#  2. host/'s rooms include only the rooms below them (no include runs back up):
#       params   the parameter schema, requests, their words         (nothing of host/)
#       io       files                                                (nothing of host/)
#       ops      the ops facade: a request resolved into an op       params
#       run      one run: views, inputs, verification, results       ops params io
#       batch    many runs: sweeps, tune, MPI                        run ops params io
#       cli      the command line and main                           batch run ops params io
#     and api/ (the C++ library) reaches host/ only through ops, params and run.
# Each rule is one line of ROOM_RULES below, so rules for other folders can join them.
#
#   tests/host/host_structure_test.sh SOURCE_DIR
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
status=0

fail() {
    echo "FAIL  $*"
    status=1
}

# 1. No op's name in host/ or api/. The names are the registered ops' (`d.name = "..."` in each
# op's registration under kernels/).
ops=$(grep -rhoE 'd\.name = "[a-z0-9_]+"' kernels --include=op.cpp | sed -E 's/.*"(.*)"/\1/' | sort -u)
if [ -z "$ops" ]; then
    fail "no op registrations found under kernels/ (d.name = \"...\" in */op.cpp)"
fi
for op in $ops; do
    hits=$(grep -rnF "\"$op\"" host api 2>/dev/null)
    if [ -n "$hits" ]; then
        fail "op name \"$op\" written in host/ or api/ (make it a field of its OpDesc):"
        echo "$hits" | sed 's/^/      /'
    fi
    # Nor in the Python package (python/tandem/: tandem.Context, tandem.iris) or its C++ module,
    # in either quote: what tandem.iris does per op comes from the op's description (ops.info).
    hits=$(grep -rnE "[\"']$op[\"']" python/tandem python/tandem_module.cpp 2>/dev/null)
    if [ -n "$hits" ]; then
        fail "op name '$op' written in python/tandem/ or python/tandem_module.cpp (read it from ops.info):"
        echo "$hits" | sed 's/^/      /'
    fi
done

# 2. Includes between rooms: "FOLDER: the folders (under host/) it may include".
ROOM_RULES=(
    "host/params:"
    "host/io:"
    "host/ops: params"
    "host/run: ops params io"
    "host/batch: run ops params io"
    "host/cli: batch run ops params io"
    "api: ops params run"
)
for rule in "${ROOM_RULES[@]}"; do
    folder=${rule%%:*}
    allowed=" ${rule#*:} "
    [ -d "$folder" ] || { fail "$folder: no such folder"; continue; }
    own=${folder#host/}
    while IFS=: read -r file line text; do
        [ -n "$file" ] || continue
        room=$(echo "$text" | sed -E 's|.*#include "host/([a-z_]+)/.*|\1|')
        [ "$room" = "$own" ] && continue
        case "$allowed" in
            *" $room "*) ;;
            *) fail "$file:$line includes host/$room/ ($folder may include: ${rule#*:})" ;;
        esac
    done < <(grep -rnE '#include "host/[a-z_]+/' "$folder" --include='*.cpp' --include='*.hpp')
done
# Every file of host/ is in a room.
loose=$(find host -maxdepth 1 -type f \( -name '*.cpp' -o -name '*.hpp' \))
[ -z "$loose" ] || fail "files of host/ outside a room: $loose"

[ $status = 0 ] && echo "host structure: no op named in host/, api/ or python/tandem/; every include runs down"
exit $status
