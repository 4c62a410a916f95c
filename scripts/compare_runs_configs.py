#!/usr/bin/python3
"""scripts/compare_runs.sh's configurations of every op and variant, from `--list-ops --json`.

    tandem --list-ops --json /dev/stdout | compare_runs_configs.py

Prints one line per configuration, `NAME|ARGUMENTS`, for every variant of every op:
  NAME-func            functional at its test shape on 4 ranks (its largest below 4 when it takes
                       fewer), with a bias where it takes one
  NAME-8               timing-only at its op's bench shape on 8 ranks
  NAME-a3              the same on the A3 ring profile's 4 ranks (ops that communicate)
  NAME-SCHEDULE-func   each further schedule, functional at its 2-rank test shape
  NAME-DTYPE-func      its second input dtype (and that output dtype when it writes it), likewise
NAME is OP-VARIANT. No op or variant is named here: a new one is compared as soon as it is
registered.
"""
import json
import sys


def shape_args(s):
    out = f"--gm {s['m']} --gk {s['k']} --gn {s['n']} --base-m {s['base_m']} --base-n {s['base_n']}"
    for key, flag in (("compute_blocks", "--compute-blocks"), ("comm_blocks", "--comm-blocks")):
        if s[key] is not None:
            out += f" {flag} {s[key]}"
    return out


def configs(ops):
    for op in ops:
        bench = op["bench_shape"]
        big = f"--gm {bench['m']} --gk {bench['k']} --gn {bench['n']} --timing-only"
        for v in op["variants"]:
            name = f"{op['name']}-{v['name']}"
            which = f"--op {op['name']} --variant {v['name']}"
            tests = v["test_shapes"]
            ranks = "4" if "4" in tests else max((r for r in tests if int(r) < 4), key=int)
            bias = " --bias n" if v["takes_bias"] else ""
            yield f"{name}-func|{which} -v Ascend910B1 -n {ranks} {shape_args(tests[ranks])}{bias}"
            yield f"{name}-8|{which} -v Ascend910B1 -n 8 {big}"
            if op["comm_kind"] != "none":
                yield f"{name}-a3|{which} -v Ascend910_9372 -n 4 {big}"
            two = tests.get("2", tests[ranks])
            for schedule in v["schedules"][1:]:
                yield f"{name}-{schedule}-func|{which} --schedule {schedule} -v Ascend910B1 -n {two['ranks']} {shape_args(two)}"
            if len(v["dtypes"]) > 1:
                dtype = v["dtypes"][1]
                out = f" --out-dtype {dtype}" if dtype in v["out_dtypes"] else ""
                yield f"{name}-{dtype}-func|{which} -v Ascend910B1 -n {two['ranks']} {shape_args(two)} --dtype {dtype}{out}"


def main():
    try:
        ops = json.load(sys.stdin)["ops"]
    except (ValueError, KeyError, TypeError) as e:
        print(f"compare_runs_configs.py: stdin is not `tandem --list-ops --json` output: {e}", file=sys.stderr)
        return 2
    for line in configs(ops):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
