#!/usr/bin/env python3
"""Fails when a source file includes across a forbidden direction.

Two tables say what is forbidden (extend them rather than the code):

  SIM_LAYERS  sim/'s layers from the bottom up (sim/README.md explains them): a file of one layer
              may include its own layer and the layers below it, never one above.
  FORBIDDEN   further rules between folders of the repository: (files under FROM, includes
              under TO, why). A rule's FROM and TO are path prefixes relative to the root.

Only quoted includes are read (`#include "sim/exec/coordinator.hpp"`), resolved from the
repository root as the build does; system includes (<...>) are never project files.

    scripts/check_include_layers.py [--root DIR]   check the tree (exit 1 on a violation)
    scripts/check_include_layers.py --self-test     check the checker on a small made-up tree
"""
import argparse
import os
import re
import sys
import tempfile

# sim/'s layers, lowest first: (name, path prefixes of its files).
SIM_LAYERS = [
    ("base", ["sim/sim_time.hpp", "sim/sim_error.hpp", "sim/profile.hpp", "sim/profile_loader.cpp",
              "sim/host_threads.hpp", "sim/host_threads.cpp"]),
    ("share", ["sim/share/"]),
    ("net", ["sim/net/"]),
    ("mem", ["sim/mem/"]),
    ("core", ["sim/core/"]),
    ("sanitize", ["sim/sanitize/"]),
    ("exec", ["sim/exec/"]),
    ("trace", ["sim/trace/"]),
    ("isa", ["sim/isa/"]),
    ("machine", ["sim/machine/"]),
    ("runtime", ["sim/runtime/"]),
]

# (files under FROM, may not include files under TO, because).
FORBIDDEN = [
    ("sim/exec/", "sim/machine/", "sim/exec runs against the machine port (sim/exec/machine_port.hpp), not the Cluster"),
    ("sim/sanitize/", "sim/machine/", "the sanitizer knows streams by plain facts, not the Cluster"),
    ("sim/", "kernels/", "the simulator knows no kernel"),
    ("sim/", "host/", "the simulator knows no program that drives it"),
    ("sim/", "api/", "the simulator knows no library built on it"),
]

SOURCE_EXTENSIONS = (".hpp", ".cpp", ".h", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(path):
    """The index of `path`'s sim layer, or None outside them."""
    for index, (_, prefixes) in enumerate(SIM_LAYERS):
        if any(path == p or (p.endswith("/") and path.startswith(p)) for p in prefixes):
            return index
    return None


def source_files(root):
    for folder, dirs, files in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        # Build trees and hidden folders hold no sources of the project.
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith(SOURCE_EXTENSIONS):
                yield os.path.normpath(os.path.join(rel_folder, name)).replace(os.sep, "/")


def includes_of(root, path):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def violations(root):
    found = []
    for path in source_files(root):
        source_layer = layer_of(path)
        for line, included in includes_of(root, path):
            where = f"{path}:{line}: includes {included}"
            target_layer = layer_of(included)
            if source_layer is not None and target_layer is not None and target_layer > source_layer:
                found.append(f"{where}: sim layer '{SIM_LAYERS[source_layer][0]}' may not include the higher "
                             f"layer '{SIM_LAYERS[target_layer][0]}' (sim/README.md)")
            for src, dst, why in FORBIDDEN:
                if path.startswith(src) and included.startswith(dst):
                    found.append(f"{where}: {src} may not include {dst}: {why}")
    return found


def self_test():
    """The checker finds a made-up violation of each kind and passes a clean tree."""
    def tree(files):
        root = tempfile.mkdtemp(prefix="include_layers_")
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        return root

    clean = tree({
        "sim/exec/a.cpp": '#include "sim/exec/machine_port.hpp"\n#include "sim/core/pipe.hpp"\n#include <vector>\n',
        "sim/machine/b.cpp": '#include "sim/exec/a.hpp"\n',
        "host/c.cpp": '#include "sim/machine/cluster.hpp"\n',
    })
    upward = tree({"sim/sanitize/a.cpp": '#include "sim/exec/block_ctx.hpp"\n'})
    machine = tree({"sim/exec/a.cpp": '#include "sim/machine/cluster.hpp"\n'})
    outward = tree({"sim/mem/a.hpp": '  # include "host/options.hpp"\n'})
    failures = []
    if violations(clean):
        failures.append(f"a clean tree was reported: {violations(clean)}")
    for name, root, expected in [("upward", upward, 1), ("machine", machine, 2), ("outward", outward, 1)]:
        got = violations(root)
        if len(got) != expected:
            failures.append(f"{name}: expected {expected} violation(s), got {got}")
    for message in failures:
        print(f"self-test FAILED: {message}")
    print("self-test: " + ("failed" if failures else "the checker finds each kind of violation"))
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    found = violations(os.path.abspath(args.root))
    for message in found:
        print(message)
    print(f"include layers: {len(found)} forbidden include(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
