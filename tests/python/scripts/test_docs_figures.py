"""The docs' quoted figures (docs/figures.toml, scripts/docs_figures.py): every fast entry re-run
matches what its doc quotes, every marker has its entry; and scripts/compare_runs.sh compares
every registered op and variant (its configurations come from --list-ops --json)."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BIN = os.environ.get("TANDEM_BIN", os.path.join(ROOT, "build", "tandem"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import docs_figures  # noqa: E402


class DocsFigures(unittest.TestCase):
    def test_the_fast_figures_are_what_their_commands_print(self):
        run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "docs_figures.py"), "check", "--fast",
                              "--bin-dir", os.path.dirname(BIN)], capture_output=True, text=True, timeout=600)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertNotIn("DIFFERS", run.stdout)

    def test_every_entry_has_its_block(self):
        for e in docs_figures.load_manifest():
            with open(os.path.join(ROOT, e["doc"]), encoding="utf-8") as f:
                lines = f.read().split("\n")
            self.assertIsNotNone(docs_figures.find_block(lines, e["id"]), f"{e['doc']}: no block {e['id']}")

    def test_the_op_tables_list_every_op_and_variant(self):
        listing = subprocess.run([BIN, "--list-ops", "--json", "/dev/stdout"], capture_output=True, text=True,
                                 check=True).stdout
        table = "\n".join(docs_figures.render_readme_ops(listing))
        for op in json.loads(listing)["ops"]:
            self.assertIn(f"| `{op['name']}`", table)
            for v in op["variants"]:
                self.assertIn(f"`{v['name']}`", table)


class CompareRunsConfigurations(unittest.TestCase):
    def test_every_op_and_variant_is_compared(self):
        env = dict(os.environ, COMPARE_RUNS_LIST="1")
        run = subprocess.run([os.path.join(ROOT, "scripts", "compare_runs.sh"), BIN, BIN], capture_output=True,
                             text=True, env=env, timeout=120)
        self.assertEqual(run.returncode, 0, run.stderr)
        configs = run.stdout.splitlines()
        names = [c.split("|")[0] for c in configs]
        self.assertEqual(len(names), len(set(names)), "a configuration name used twice")
        listing = json.loads(subprocess.run([BIN, "--list-ops", "--json", "/dev/stdout"], capture_output=True,
                                            text=True, check=True).stdout)
        for op in listing["ops"]:
            for v in op["variants"]:
                which = f"--op {op['name']} --variant {v['name']} "
                mine = [c for c in configs if which in c]
                self.assertTrue(any(c.split("|")[0].endswith("-func") for c in mine), which)
                self.assertTrue(any("--timing-only" in c for c in mine), which)
                for schedule in v["schedules"][1:]:
                    self.assertTrue(any(f"--schedule {schedule}" in c for c in mine), (which, schedule))


if __name__ == "__main__":
    unittest.main()
