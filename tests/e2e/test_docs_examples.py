"""The documentation's examples run as written. A fenced block preceded by a
marker line is an example this test runs against a real server on the
simulator:

    <!-- example: run -->    a sh block: run with bash -e; must exit 0, print
                             something, end within a few seconds, and any
                             line that looks like JSON must parse
    <!-- example: keys -->   a json block that is a whole keys file: the
                             server must start with it as --keys
    <!-- example: json -->   a json block that must parse as it stands

A run block sees $KEY (the README's first block sets it, the later ones use
it). Before running, the block's server address (127.0.0.1:8080) becomes the test
server's, a demo key (demo-<32 hex> or demo-...) its printed key, `build/`
the build directory, and `--duration N` of oddsload 2 (the figures it
prints are only examples). Nothing else is changed."""
import glob
import json
import os
import re
import subprocess
import tempfile
import unittest

import harness as h

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MARKER = re.compile(r"^<!-- example: (run|keys|json) -->\s*$")
TIMEOUT_S = 20


def examples():
    """(file, line, kind, text) of every marked block of README.md and docs/*.md."""
    found = []
    for path in [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        with open(path) as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines):
            m = MARKER.match(line)
            if not m:
                continue
            assert i + 1 < len(lines) and lines[i + 1].startswith("```"), f"{path}:{i + 1}: marker without a block"
            end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
            found.append((os.path.relpath(path, ROOT), i + 2, m.group(1), "\n".join(lines[i + 2:end]) + "\n"))
    return found


class DocsExamples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = h.Server("--feed", "sim:seed=7,events=60,rate=300")
        cls.key = cls.server.wait_for(r"demo API key \(sandbox, all permissions\): (demo-[0-9a-f]+)").group(1)

        def live_soccer():
            r, body = h.request(cls.server.port, "/v1/live?sport=1", key=cls.key)
            return r.status == 200 and json.loads(body)["data"]

        h.wait_until(live_soccer, 30, "live soccer events")

    @classmethod
    def tearDownClass(cls):
        cls.server.__exit__(None, None, None)

    def localise(self, text):
        text = text.replace("127.0.0.1:8080", f"127.0.0.1:{self.server.port}")
        text = re.sub(r"demo-(\.\.\.|[0-9a-f]{32})", self.key, text)
        text = re.sub(r"(?<![\w/])build/", os.path.abspath(h.args().build_dir) + "/", text)
        return re.sub(r"--duration \d+", "--duration 2", text)

    def test_there_are_examples_of_each_kind(self):
        kinds = [k for _, _, k, _ in examples()]
        for kind in ("run", "keys", "json"):
            self.assertIn(kind, kinds)
        self.assertGreaterEqual(kinds.count("run"), 4)

    def test_every_marked_example(self):
        for path, line, kind, text in examples():
            with self.subTest(f"{path}:{line} ({kind})"):
                getattr(self, "check_" + kind)(path, line, text)

    def check_run(self, path, line, text):
        with tempfile.TemporaryDirectory() as cwd:
            try:
                # $KEY as the README's first block sets it, for the blocks after it
                env = dict(os.environ, KEY=self.key)
                p = subprocess.run(["bash", "-e", "-c", self.localise(text)], cwd=cwd, env=env, capture_output=True,
                                   text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                self.fail(f"{path}:{line}: still running after {TIMEOUT_S} s")
        self.assertEqual(p.returncode, 0, f"{path}:{line}: exit {p.returncode}\n{p.stdout[-1500:]}\n{p.stderr[-1500:]}")
        self.assertTrue(p.stdout.strip(), f"{path}:{line}: printed nothing")
        for out_line in p.stdout.splitlines():
            if out_line.startswith("{\"") and out_line.endswith("}"):
                try:
                    json.loads(out_line)
                except ValueError as e:
                    self.fail(f"{path}:{line}: printed invalid JSON ({e}): {out_line[:200]}")

    def check_keys(self, path, line, text):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write(text)
        try:
            with h.Server("--feed", "none", "--keys", f.name) as s:
                s.wait_for(r"serving http://", timeout=30)
                self.assertIsNone(s.proc.poll(), f"{path}:{line}: the server refused the keys file:\n{s.log()}")
        finally:
            os.unlink(f.name)

    def check_json(self, path, line, text):
        try:
            json.loads(text)
        except ValueError as e:
            self.fail(f"{path}:{line}: not valid JSON: {e}")


if __name__ == "__main__":
    h.main()
