"""Mutant runner behind tests/mutants/run.sh: copies the working tree to a
scratch directory, builds it once, then for each mutant in cases/ patches one
file (exact text, found exactly once), rebuilds what its tests need, runs
only those tests and reverts the file. A mutant the tests do not notice
"survives": a behaviour no test guards. Format and use: README.md here."""
import argparse
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(HERE, "cases")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
E2E_TARGETS = ["oddsrelay", "oddsfeed", "oddsload", "oddsclient"]  # what the e2e tests run
DEFAULT_TIMEOUT = 600      # seconds per listed test without a baseline time, unless the mutant says otherwise
MIN_TIMEOUT = 180          # with a baseline time t: max(MIN_TIMEOUT, 8 t)
BUILD_TIMEOUT = 3600       # the first full build
REBUILD_TIMEOUT = 1800     # one incremental rebuild
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class Stop(Exception):
    """SIGINT/SIGTERM/SIGHUP: clean up and leave."""


# ---------------------------------------------------------------- the format

class Test:
    """One listed test: `gtest <binary> <filter>` or `e2e <file.py> [unittest names...]`."""

    def __init__(self, spec, where):
        words = spec.split()
        if len(words) == 3 and words[0] == "gtest":
            self.kind, self.binary, self.filter = "gtest", words[1], words[2]
            self.targets = [self.binary]
        elif len(words) >= 2 and words[0] == "e2e" and words[1].endswith(".py"):
            self.kind, self.file, self.names = "e2e", words[1], words[2:]
            self.targets = list(E2E_TARGETS)
        else:
            raise ValueError(f"{where}: test must be 'gtest <binary> <filter>' or 'e2e <file.py> [names...]': {spec!r}")
        self.label = " ".join(words)

    def command(self, src, build):
        if self.kind == "gtest":
            return [os.path.join(build, "tests", self.binary), "--gtest_filter=" + self.filter]
        return [PYTHON, os.path.join(src, "tests", "e2e", self.file), "--build-dir", build,
                "--fixtures", os.path.join(src, "tests", "fixtures"), *self.names]

    @staticmethod
    def ran(kind, log):
        """How many test cases ran, from the log (None if it cannot tell)."""
        pat = r"\[==========\] (\d+) tests? from" if kind == "gtest" else r"^Ran (\d+) tests? in"
        m = re.findall(pat, log, re.M)
        return int(m[-1]) if m else None

    @staticmethod
    def failed_cases(kind, log):
        if kind == "gtest":
            names = re.findall(r"^\[  FAILED  \] ([\w/.]+)(?:, where|$| \()", log, re.M)
        else:
            names = re.findall(r"^(?:FAIL|ERROR): (\w+)", log, re.M)
        return list(dict.fromkeys(names))


class Mutant:
    def __init__(self, path):
        self.name = os.path.basename(path)[: -len(".mutant")]
        if not NAME_RE.match(self.name):
            raise ValueError(f"{path}: name must be lower-case letters, digits and '-'")
        head, find, replace, block = {}, [], [], None
        self.tests = []
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f.read().split("\n"), 1):
                if line == "--- find":
                    block = find
                elif line == "--- replace":
                    if block is not find:
                        raise ValueError(f"{path}:{n}: '--- replace' must follow '--- find'")
                    block = replace
                elif block is not None:
                    block.append(line)
                elif line.strip() == "" or line.startswith("#"):
                    continue
                else:
                    key, sep, value = line.partition(":")
                    if not sep:
                        raise ValueError(f"{path}:{n}: expected 'key: value'")
                    key, value = key.strip(), value.strip()
                    if key == "test":
                        self.tests.append(Test(value, f"{path}:{n}"))
                    elif key in ("description", "file", "timeout"):
                        head[key] = value
                    else:
                        raise ValueError(f"{path}:{n}: unknown key {key!r}")
        while replace and replace[-1] == "":  # the file's final newline(s)
            replace.pop()
        self.find, self.replace = "\n".join(find), "\n".join(replace)
        self.description = head.get("description", "")
        self.file = head.get("file", "")
        if not re.fullmatch(r"[1-9][0-9]*", head.get("timeout", "1")):
            raise ValueError(f"{path}: timeout must be a number of seconds")
        self.timeout = int(head["timeout"]) if "timeout" in head else None
        missing = [k for k, v in (("description", self.description), ("file", self.file),
                                  ("test", self.tests), ("--- find", self.find)) if not v]
        if missing or block is not replace:
            raise ValueError(f"{path}: needs {', '.join(missing) or '--- replace'}")
        if self.find == self.replace:
            raise ValueError(f"{path}: find and replace are the same")

    def check(self, root):
        """(file text, None) when the find text occurs exactly once, else (None, why)."""
        path = os.path.join(root, self.file)
        if not os.path.isfile(path):
            return None, f"{self.file} does not exist"
        text = read_text(path)
        n = text.count(self.find)
        return (text, None) if n == 1 else (None, f"find text occurs {n} times in {self.file}")


# Sources are read and written byte for byte (no newline translation), so a
# reverted file is identical to the original.
def read_text(path):
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
        return f.read()


def write_text(path, text):
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
        f.write(text)


def load_mutants():
    files = sorted(f for f in os.listdir(CASES) if f.endswith(".mutant"))
    return [Mutant(os.path.join(CASES, f)) for f in files]


# ------------------------------------------------------------- the processes

CURRENT = []  # the process group running now, killed on the way out


def run_bounded(cmd, log_path, timeout, cwd):
    """Runs cmd in its own process group, output to log_path; returns (rc or
    None on timeout, seconds). Whatever the group left behind is killed."""
    t0 = time.monotonic()
    with open(log_path, "w") as log:
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             cwd=cwd, start_new_session=True)
        CURRENT.append(p)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            kill_group(p)
            CURRENT.remove(p)
    return rc, time.monotonic() - t0


def kill_group(p):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except (ProcessLookupError, PermissionError):
            break
        if sig == signal.SIGTERM:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
    if p.poll() is None:
        p.kill()
    p.wait()


def on_signal(signum, frame):
    raise Stop(signal.Signals(signum).name)


# ---------------------------------------------------------------- the scratch

def tree_files():
    out = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "-co", "--exclude-standard"],
                         capture_output=True, check=True).stdout.decode()
    files = []
    for f in out.split("\0"):
        parts = f.split("/")
        if not f or parts[0].startswith("build") or "node_modules" in parts:
            continue
        if os.path.isfile(os.path.join(REPO, f)):
            files.append(f)
    return sorted(set(files))


def same(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


def sync_tree(src):
    """Makes src a copy of the working tree. Only files whose content differs
    are written (with a fresh mtime), so the scratch build stays incremental."""
    want = tree_files()
    copied = 0
    for f in want:
        a, b = os.path.join(REPO, f), os.path.join(src, f)
        if os.path.isfile(b) and not os.path.islink(b) and same(a, b):
            continue
        os.makedirs(os.path.dirname(b), exist_ok=True)
        if os.path.lexists(b):
            os.unlink(b)
        shutil.copyfile(a, b)
        shutil.copymode(a, b)
        copied += 1
    keep = set(want)
    removed = 0
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if d != "node_modules"]
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), src)
            if rel not in keep:
                os.unlink(os.path.join(root, n))
                removed += 1
    nm = os.path.join(REPO, "tests", "e2e", "node", "node_modules")
    link = os.path.join(src, "tests", "e2e", "node", "node_modules")
    if os.path.isdir(nm) and not os.path.lexists(link):
        os.symlink(nm, link)
    return len(want), copied, removed


def build(build_dir, jobs, targets, log_path, timeout):
    cmd = ["cmake", "--build", build_dir, "-j", str(jobs)]
    if targets:
        cmd += ["--target", *targets]
    rc, secs = run_bounded(cmd, log_path, timeout, build_dir)
    return rc == 0, secs


def configure(src, build_dir, log_path):
    if os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        return True
    os.makedirs(build_dir, exist_ok=True)
    cmd = ["cmake", "-S", src, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DODDSRELAY_PERF=OFF"]
    if shutil.which("ninja"):
        cmd[1:1] = ["-G", "Ninja"]
    rc, _ = run_bounded(cmd, log_path, 600, src)
    return rc == 0


# ------------------------------------------------------------------- the run

def run_test(t, src, build_dir, log_path, timeout):
    """'pass', 'fail', 'missing' (no test case ran) or 'timeout', with seconds and failed cases."""
    if not os.path.exists(t.command(src, build_dir)[0 if t.kind == "gtest" else 1]):
        with open(log_path, "w") as f:
            f.write(f"no such file: {t.command(src, build_dir)}\n")
        return "missing", 0.0, []
    rc, secs = run_bounded(t.command(src, build_dir), log_path, timeout, src)
    with open(log_path, errors="replace") as f:
        log = f.read()
    if rc is None:
        return "timeout", secs, []
    if rc == 0:
        return ("missing" if Test.ran(t.kind, log) == 0 else "pass"), secs, []
    if t.kind == "e2e" and t.names and re.search(r"AttributeError: module '__main__' has no attribute", log):
        return "missing", secs, []
    cases = Test.failed_cases(t.kind, log)
    if not cases:  # it died before saying which test failed
        cases = [f"died of signal {-rc}" if rc < 0 else f"exit status {rc}"]
    return "fail", secs, cases


def slug(label):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label)[:80]


def print_list(mutants):
    for m in mutants:
        _, why = m.check(REPO)
        print(f"{m.name:<36} {'stale' if why else 'ok':<6} {m.file}")
        print(f"    {m.description}")
        for t in m.tests:
            print(f"    test: {t.label}")


def main():
    ap = argparse.ArgumentParser(
        prog="tests/mutants/run.sh",
        description="Apply each mutant in tests/mutants/cases/ to a scratch copy of the working tree, rebuild, "
                    "run the tests listed for it, revert. Prints '<name>  killed by <test>' / 'survived' / "
                    "'stale' / 'build-failed' per mutant and a final count; exits 1 if any mutant survived.")
    ap.add_argument("--only", metavar="NAME[,NAME]", help="run only these mutants")
    ap.add_argument("--list", action="store_true", help="list the mutants (ok/stale against the working tree) and exit")
    ap.add_argument("--scratch", metavar="DIR", default=f"/tmp/oddsrelay-mutants-{os.getuid()}",
                    help="scratch directory, reused between runs so rebuilds stay incremental (default: %(default)s)")
    ap.add_argument("--jobs", metavar="N", type=int, default=2, help="build jobs (default: 2)")
    ap.add_argument("--all-tests", action="store_true",
                    help="run every listed test of a mutant, not only up to the first that kills it")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip running each listed test once on the unmutated build first")
    a = ap.parse_args()

    try:
        mutants = load_mutants()
    except ValueError as e:
        print(f"run.sh: {e}", file=sys.stderr)
        return 2
    if a.only:
        wanted = [n.strip() for n in a.only.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in {m.name for m in mutants}]
        if unknown:
            print(f"run.sh: no such mutant: {', '.join(unknown)} (see --list)", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m.name in wanted]
    if a.list:
        print_list(mutants)
        return 0

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    scratch = os.path.abspath(a.scratch)
    src, build_dir, logs = (os.path.join(scratch, d) for d in ("src", "build", "logs"))
    marker = os.path.join(scratch, ".oddsrelay-mutants")
    if os.path.isdir(scratch) and os.listdir(scratch) and not os.path.exists(marker):
        print(f"run.sh: {scratch} is not empty and not a mutant scratch directory; pass another --scratch",
              file=sys.stderr)
        return 2
    os.makedirs(scratch, exist_ok=True)
    open(marker, "w").close()
    lock = open(os.path.join(scratch, ".lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"run.sh: another mutant run uses {scratch}; pass --scratch DIR", file=sys.stderr)
        return 2
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs)
    restore = None  # (path, original text) while a mutant is applied
    try:
        n, copied, removed = sync_tree(src)
        rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        print(f"scratch {scratch}: {n} files from {REPO} at {rev} (+ working-tree changes), "
              f"{copied} copied, {removed} removed", flush=True)
        if not configure(src, build_dir, os.path.join(logs, "configure.log")):
            print(f"run.sh: cmake configure failed, see {logs}/configure.log", file=sys.stderr)
            return 2
        ok, secs = build(build_dir, a.jobs, None, os.path.join(logs, "build.log"), BUILD_TIMEOUT)
        if not ok:
            print(f"run.sh: the unmutated tree does not build, see {logs}/build.log", file=sys.stderr)
            return 2
        print(f"build: {secs:.0f} s", flush=True)

        checked = {m.name: m.check(src) for m in mutants}
        baseline, flaky, base_secs = {}, set(), {}
        if not a.no_baseline:
            todo = {}
            for m in mutants:
                if checked[m.name][1] is None:
                    for t in m.tests:
                        todo.setdefault(t.label, (t, m.timeout or DEFAULT_TIMEOUT))
            os.makedirs(os.path.join(logs, "baseline"))
            for label, (t, timeout) in todo.items():
                log = os.path.join(logs, "baseline", slug(label) + ".log")
                st, secs, cases = run_test(t, src, build_dir, log, timeout)
                note = f" ({', '.join(cases[:3])})" if cases else ""
                if st in ("fail", "timeout"):  # once more: a loaded machine makes some tests flaky
                    os.replace(log, log[:-4] + ".1.log")
                    st, secs, _ = run_test(t, src, build_dir, log, timeout)
                    if st == "pass":
                        flaky.add(label)
                        note = f" on the second try: flaky{note}"
                baseline[label] = st
                base_secs[label] = secs
                print(f"baseline: {label}  {st}{note} ({secs:.0f} s)", flush=True)

        counts = dict(killed=0, survived=0, stale=0, build_failed=0, untested=0)
        width = max([len(m.name) for m in mutants] + [20]) + 2
        for m in mutants:
            text, why = checked[m.name]
            if why:
                counts["stale"] += 1
                print(f"{m.name:<{width}}stale ({why})", flush=True)
                continue
            mlogs = os.path.join(logs, m.name)
            os.makedirs(mlogs)
            path = os.path.join(src, m.file)
            restore = (path, text)
            write_text(path, text.replace(m.find, m.replace, 1))
            t0 = time.monotonic()
            targets = list(dict.fromkeys(x for t in m.tests for x in t.targets))
            ok, _ = build(build_dir, a.jobs, targets, os.path.join(mlogs, "build.log"), REBUILD_TIMEOUT)
            result, notes = None, []
            if not ok:
                result = "build-failed"
                counts["build_failed"] += 1
            else:
                kills = []
                for t in m.tests:
                    if baseline.get(t.label, "pass") != "pass":
                        notes.append(f"not run: {t.label} is {baseline[t.label]} without the mutant")
                        continue
                    limit = m.timeout or (max(MIN_TIMEOUT, int(8 * base_secs[t.label])) if t.label in base_secs
                                          else DEFAULT_TIMEOUT)
                    st, secs, cases = run_test(t, src, build_dir, os.path.join(mlogs, slug(t.label) + ".log"), limit)
                    if st in ("fail", "timeout"):
                        detail = (f" ({', '.join(cases[:3])})" if cases
                                  else f" (timed out after {limit} s)" if st == "timeout" else "")
                        kills.append(t.label + detail + (" [flaky at baseline]" if t.label in flaky else ""))
                        if not a.all_tests:
                            break
                    elif st == "missing":
                        notes.append(f"{t.label} ran no test")
                    elif a.all_tests:
                        notes.append(f"passed: {t.label}")
                if kills:
                    result = "killed by " + "; ".join(kills)
                    counts["killed"] += 1
                else:
                    ran_any = any(baseline.get(t.label, "pass") == "pass" for t in m.tests)
                    result = "survived" if ran_any else "untested"
                    counts["survived" if ran_any else "untested"] += 1
            write_text(path, text)
            restore = None
            tail = f"  [{time.monotonic() - t0:.0f} s]" + ("; " + "; ".join(notes) if notes else "")
            print(f"{m.name:<{width}}{result}{tail}", flush=True)

        line = (f"mutants: {counts['killed']} killed, {counts['survived']} survived, {counts['stale']} stale"
                + (f", {counts['build_failed']} build-failed" if counts["build_failed"] else "")
                + (f", {counts['untested']} untested" if counts["untested"] else ""))
        print(line)
        print(f"logs: {logs}")
        if counts["survived"] or counts["untested"]:
            return 1
        return 3 if counts["stale"] or counts["build_failed"] else 0
    except Stop as e:
        print(f"run.sh: stopped by {e}", file=sys.stderr)
        return 130
    finally:
        for p in list(CURRENT):
            kill_group(p)
        if restore:
            write_text(*restore)


if __name__ == "__main__":
    sys.exit(main())
