"""data/catalog.json is what tools/catalog/gen_catalog.py writes: two runs
give the same bytes as the committed file, at the interface's size (4,873
markets, 17,227 per-market outcome ids, 25 sports)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import harness as h

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GEN = os.path.join(ROOT, "tools", "catalog", "gen_catalog.py")
DATA = os.path.join(ROOT, "data", "catalog.json")


class Generator(unittest.TestCase):
    def generate(self, path):
        r = subprocess.run([sys.executable, GEN, "-o", path], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stderr

    def test_deterministic_and_committed(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
            summary = self.generate(a)
            self.generate(b)
            with open(a, "rb") as fa, open(b, "rb") as fb, open(DATA, "rb") as fd:
                first, second, committed = fa.read(), fb.read(), fd.read()
            self.assertEqual(first, second, "two runs differ")
            self.assertEqual(first, committed, "data/catalog.json is not what the generator writes: re-run it")
        self.assertIn("4873 markets, 17227 market outcomes, 17227 outcome ids, 25 sports", summary)
        cat = json.loads(committed)
        owners = {}
        for m in cat["markets"]:
            for o in m["outcomes"]:
                self.assertNotIn(o, owners, f"outcome {o} in markets {owners.get(o)} and {m['id']}")
                owners[o] = m["id"]
        self.assertEqual(len(owners), 17227)
        self.assertEqual(set(owners), {int(k) for k in cat["outcomes"]})
        self.assertEqual([o for o, mid in sorted(owners.items()) if mid == 1001], [2001, 2002, 2003])


if __name__ == "__main__":
    h.main()
