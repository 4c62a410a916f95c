#!/usr/bin/python3
"""The docs' quoted figures, re-run from one manifest (docs/figures.toml), so that none goes stale.

    docs_figures.py check  [--fast] [--heavy] [--only ID,...] [--bin-dir DIR]   re-run and compare; exit 1 on a difference
    docs_figures.py update [--fast] [--heavy] [--only ID,...] [--bin-dir DIR]   re-run and rewrite the docs' blocks
    docs_figures.py list                                              the manifest: id, doc, fast, command

A doc quotes a figure between two markers, on lines of their own:

    <!-- figure ID -->
    ...the lines the manifest's entry ID generates...
    <!-- /figure ID -->

Each entry of the manifest ([[figure]] in docs/figures.toml) says:
  id       the marker's ID (unique)
  doc      the file that quotes it (relative to the repository root)
  command  what prints it, run by /bin/sh from the repository root ({tmp}: a scratch directory)
  keep     regular expressions: the stdout lines kept (any matches; all lines when absent)
  drop     regular expressions: lines dropped after `keep` (host times, which no run repeats)
  render   how the kept lines become the block: "code" (a ``` block, the default), "command"
           (a ```sh block with the command, then the lines in a ``` block), "markdown" (the lines
           as they are: a table), "command_markdown" (the ```sh block, then the lines as they
           are), or the name of a renderer below that makes Markdown of the
           command's stdout (the op tables, from `--list-ops --json`)
  fast     true when it runs in seconds: ctest's docs_figures checks these on every build
  heavy    true when it takes many CPU minutes (the MoE layer at hundreds of ranks): run only
           when named with --only or with --heavy

`--bin-dir DIR` runs the commands with DIR in place of their leading `build/` (ctest's build
directory). Exit status: 0 when every block matches (check) or was written (update), 1 when a
block differs or a marker is missing, 2 on a bad manifest or a command that failed.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "docs", "figures.toml")
BEGIN = re.compile(r"^<!-- figure (\S+) -->\s*$")
END = re.compile(r"^<!-- /figure (\S+) -->\s*$")
FIELDS = {"id", "doc", "command", "keep", "drop", "render", "fast", "heavy"}


class ManifestError(Exception):
    pass


def load_manifest(path=MANIFEST):
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    entries = doc.get("figure", [])
    seen = set()
    for i, e in enumerate(entries):
        where = f"{os.path.relpath(path, ROOT)}: figure {i + 1}"
        unknown = set(e) - FIELDS
        if unknown:
            raise ManifestError(f"{where}: unknown field(s) {', '.join(sorted(unknown))} (known: {', '.join(sorted(FIELDS))})")
        for field in ("id", "doc", "command"):
            if not isinstance(e.get(field), str) or not e[field]:
                raise ManifestError(f"{where}: '{field}' must be a non-empty string")
        if e["id"] in seen:
            raise ManifestError(f"{where}: id '{e['id']}' is used twice")
        seen.add(e["id"])
        render = e.get("render", "code")
        if render not in ("code", "command", "markdown", "command_markdown") and render not in RENDERERS:
            raise ManifestError(f"{where} ({e['id']}): render '{render}' is not code, command, markdown, "
                                f"command_markdown or one of "
                                f"{', '.join(sorted(RENDERERS))}")
        for field in ("keep", "drop"):
            for rx in e.get(field, []):
                try:
                    re.compile(rx)
                except re.error as err:
                    raise ManifestError(f"{where} ({e['id']}): {field} '{rx}': {err}") from None
    return entries


# ---- the op tables, from `tandem --list-ops --json /dev/stdout` ------------------------------------

def _ops(text):
    return json.loads(text)["ops"]


def _page(op):
    return f"docs/ops/{op['name']}.md"


def _holds(op, sharding):
    """What each rank holds of A and B, in docs/ops/README.md's words."""
    if op["own_math"]:
        return "x: M x K (its tokens: the caller's A); the rest of its data the op makes (its page)"
    a = {"rows": "A_r: M/W x K (rows of A)",
         "cols": "A_r: M x K (its own)" if sharding["k_per_rank"] else "A_r: M x K/W (columns of A)",
         "replicated": "A: M x K"}[sharding["a"]]
    b = {"rows": "B_r: K x N (its own)", "cols": "B_r: K x N/W (columns of B)",
         "replicated": "B: K x N"}[sharding["b"]]
    return f"{a}, {b}"


def _gets(sharding):
    if sharding["out_like_a"]:
        return "out: M x K (a row per row of its A)"
    summed = sharding["k_per_rank"]
    if sharding["out"] == "cols":
        return "C_r: M x N/W, its column block of the sum over ranks" if summed else "C_r: M x N/W, its column block"
    if sharding["out"] == "rows":
        return "C_r: M/W x N, its row block"
    return "C: M x N, the sum over ranks" if summed else "C: M x N"


def _variant_note(op):
    """Variants whose sharding differs from their op's: "; `ascend`, `ascend_subtile`: B: K x N"."""
    notes = {}
    for v in op["variants"]:
        if v["sharding"] != op["sharding"]:
            notes.setdefault(_holds(op, v["sharding"]), []).append(f"`{v['name']}`")
    return "".join(f" ({', '.join(names)}: {holds})" for holds, names in notes.items())


def _variants(op):
    return ", ".join(f"`{v['name']}`" for v in op["variants"])


def render_readme_ops(text):
    """README.md's table: every op, what it computes (its own words), its variants, its page."""
    lines = ["| op | what each rank computes | variants (the first is the default) | page |", "|---|---|---|---|"]
    for i, op in enumerate(_ops(text)):
        name = f"`{op['name']}`" + (" (default)" if i == 0 else "")
        lines.append(f"| {name} | {op['doc']} | {_variants(op)} | [{op['name']}]({_page(op)}) |")
    return lines


def render_ops_pages(text):
    """docs/ops/README.md's list of pages."""
    lines = ["| op | variants (the first is the default) | page |", "|---|---|---|"]
    for i, op in enumerate(_ops(text)):
        notes = [n for n, on in (("the default op", i == 0), ("no communication", op["comm_kind"] == "none"),
                                 ("its own math", op["own_math"])) if on]
        name = f"`{op['name']}`" + (f" ({', '.join(notes)})" if notes else "")
        lines.append(f"| {name} | {_variants(op)} | [{op['name']}.md]({op['name']}.md) |")
    return lines


def render_ops_sharding(text):
    """docs/ops/README.md's table of what each rank holds and gets, from each op's Sharding."""
    lines = ["| op | each rank holds | each rank gets | collective (`comm_kind`) |", "|---|---|---|---|"]
    for op in _ops(text):
        gets = op.get("own_output", "out: M x K, its tokens' outputs") if op["own_math"] else _gets(op["sharding"])
        lines.append(f"| `{op['name']}` | {_holds(op, op['sharding'])}{_variant_note(op)} | {gets} | "
                     f"`{op['comm_kind']}` |")
    return lines


RENDERERS = {"readme_ops": render_readme_ops, "ops_pages": render_ops_pages, "ops_sharding": render_ops_sharding}


# ---- running an entry -------------------------------------------------------------------------------

def command_of(entry, bin_dir, tmp):
    cmd = entry["command"].replace("{tmp}", tmp)
    if bin_dir:
        cmd = re.sub(r"(^|\s)build/", lambda m: m.group(1) + bin_dir.rstrip("/") + "/", cmd)
    return cmd


def generate(entry, bin_dir):
    """The block's lines for `entry`: its command run, its lines kept, rendered."""
    with tempfile.TemporaryDirectory(prefix="tandem_docs_figures_") as tmp:
        cmd = command_of(entry, bin_dir, tmp)
        proc = subprocess.run(cmd, shell=True, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ManifestError(f"{entry['id']}: `{cmd}` exited {proc.returncode}:\n{proc.stderr.strip()}")
    render = entry.get("render", "code")
    if render in RENDERERS:
        return RENDERERS[render](proc.stdout)
    keep = [re.compile(rx) for rx in entry.get("keep", [])]
    drop = [re.compile(rx) for rx in entry.get("drop", [])]
    lines = [ln.rstrip() for ln in proc.stdout.splitlines()]
    if keep:
        lines = [ln for ln in lines if any(rx.search(ln) for rx in keep)]
    lines = [ln for ln in lines if not any(rx.search(ln) for rx in drop)]
    if not lines:
        raise ManifestError(f"{entry['id']}: `{cmd}` printed no line the entry keeps")
    if render == "markdown":
        return lines
    if render == "command_markdown":
        return ["```sh", entry["command"], "```", *lines]
    block = ["```", *lines, "```"]
    if render == "command":
        block = ["```sh", entry["command"], "```", *block]
    return block


def find_block(lines, fid):
    """(first line after the begin marker, index of the end marker) of block `fid`, or None."""
    begin = None
    for i, ln in enumerate(lines):
        m = BEGIN.match(ln)
        if m and m.group(1) == fid:
            begin = i + 1
        m = END.match(ln)
        if m and m.group(1) == fid and begin is not None:
            return begin, i
    return None


def markers_in(path):
    with open(path, encoding="utf-8") as f:
        return {m.group(1) for ln in f for m in [BEGIN.match(ln)] if m}


def docs_with_markers():
    out = []
    for top in ("README.md", "docs", "prof_analysis", "kernels", "sim"):
        path = os.path.join(ROOT, top)
        if os.path.isfile(path):
            out.append(path)
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames.sort()
            out += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".md")]
    return out


def choose(entries, only, fast, heavy):
    """The entries a run re-runs: those named (heavy ones too), else all but the heavy ones
    (unless `heavy`); only the fast ones when `fast`."""
    if only is not None:
        chosen = [e for e in entries if e["id"] in only]
    else:
        chosen = [e for e in entries if heavy or not e.get("heavy")]
    return [e for e in chosen if e.get("fast")] if fast else chosen


def main():
    ap = argparse.ArgumentParser(prog="docs_figures.py", description=__doc__.split("\n")[0])
    ap.add_argument("action", choices=("check", "update", "list"))
    ap.add_argument("--fast", action="store_true", help="only the entries marked fast (what ctest checks)")
    ap.add_argument("--heavy", action="store_true", help="also the entries marked heavy (many CPU minutes)")
    ap.add_argument("--only", metavar="ID,...", help="only these entries (heavy ones too)")
    ap.add_argument("--bin-dir", metavar="DIR", help="run the commands with DIR in place of their leading build/")
    args = ap.parse_args()
    try:
        entries = load_manifest()
    except (ManifestError, tomllib.TOMLDecodeError, OSError) as e:
        print(f"docs_figures.py: {e}", file=sys.stderr)
        return 2
    if args.action == "list":
        for e in entries:
            speed = "heavy" if e.get("heavy") else "fast" if e.get("fast") else "slow"
            print(f"{e['id']}\t{e['doc']}\t{speed}\t{e['command']}")
        return 0
    status = 0
    # Every marker in the docs has its entry, every entry its marker.
    known = {e["id"] for e in entries}
    for path in docs_with_markers():
        for fid in sorted(markers_in(path) - known):
            print(f"docs_figures.py: {os.path.relpath(path, ROOT)}: marker '{fid}' has no entry in docs/figures.toml")
            status = 1
    only = args.only.split(",") if args.only else None
    missing = [i for i in only or [] if i not in known]
    if missing:
        print(f"docs_figures.py: --only: no entry {', '.join(missing)}", file=sys.stderr)
        return 2
    chosen = choose(entries, only, args.fast, args.heavy)
    for e in chosen:
        path = os.path.join(ROOT, e["doc"])
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
        except OSError as err:
            print(f"docs_figures.py: {e['id']}: {err}")
            status = 1
            continue
        span = find_block(lines, e["id"])
        if span is None:
            print(f"docs_figures.py: {e['doc']}: no block <!-- figure {e['id']} --> ... <!-- /figure {e['id']} -->")
            status = 1
            continue
        try:
            block = generate(e, args.bin_dir)
        except ManifestError as err:
            print(f"docs_figures.py: {err}", file=sys.stderr)
            return 2
        begin, end = span
        if lines[begin:end] == block:
            print(f"same     {e['id']} ({e['doc']})")
            continue
        if args.action == "check":
            print(f"DIFFERS  {e['id']} ({e['doc']}): `{e['command']}` now prints")
            for ln in block:
                print(f"    {ln}")
            print("  where the doc has")
            for ln in lines[begin:end]:
                print(f"    {ln}")
            status = 1
            continue
        lines[begin:end] = block
        tmp = path + f".tmp.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.replace(tmp, path)
        print(f"updated  {e['id']} ({e['doc']})")
    return status


if __name__ == "__main__":
    sys.exit(main())
