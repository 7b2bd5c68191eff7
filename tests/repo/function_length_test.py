#!/usr/bin/env python3
"""No function in the binaries (tools/) is longer than 80 lines (issue 22).

tools/ is the composition root: its functions should read as a list of named
steps, and a long one is where wiring and logic start to mix. This test fails
when a C++ function (signature to closing brace, lambdas inside it included)
under the given folders is longer than the limit, and prints where it is.

It reads the sources as text: comments, strings and character literals are
blanked out, then a '{' whose header (the text since the last ';', '{' or
'}') has a parenthesis and is not a control statement opens a function
body, and namespace, class, struct, enum and initializer braces do not.

Usage: function_length_test.py [REPO_ROOT [FOLDER...]]  (default: two levels up, tools)
       function_length_test.py --self-test  (shows that an 81-line function fails)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

LIMIT = 80
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else)\b")
SCOPE = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace|struct|class|enum|union|extern)\b", re.S)


def blank(text):
    """The text with comments and literals turned into spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = ")" + text[i + 2 : open_paren] + '"'
            j = text.find(delim, open_paren)
            j = n if j < 0 else j + len(delim)
            out.append('R"' + re.sub(r"[^\n]", " ", text[i + 2 : j - 1]) + '"')
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator: 3'600'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of every outermost function body in text."""
    code = blank(text)
    found = []
    stack = []  # per open brace: "function", "scope" or "other"
    header_start = 0
    fn_start = None
    for i, c in enumerate(code):
        if c in ";{}":
            if c == "{":
                header = code[header_start:i]
                if "function" in stack:
                    kind = "other"
                elif SCOPE.match(header) or "(" not in header or CONTROL.match(header) or re.search(r"=\s*$", header):
                    kind = "scope" if SCOPE.match(header) else "other"
                else:
                    kind = "function"
                    lead = len(header) - len(header.lstrip())
                    fn_start = (header_start + lead, header)
                stack.append(kind)
            elif c == "}" and stack:
                kind = stack.pop()
                if kind == "function" and fn_start is not None:
                    start, header = fn_start
                    name = re.findall(r"([~\w:]+)\s*\(", header.split("(")[0] + "(")
                    first = code.count("\n", 0, start) + 1
                    last = code.count("\n", 0, i) + 1
                    found.append((name[0] if name else "?", first, last))
                    fn_start = None
            header_start = i + 1
    return found


def check(root, folders):
    bad = checked = 0
    for folder in folders:
        for dirpath, _, names in sorted(os.walk(os.path.join(root, folder))):
            for name in sorted(names):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for fn, first, last in functions(text):
                    checked += 1
                    length = last - first + 1
                    if length > LIMIT:
                        rel = os.path.relpath(path, root)
                        print(f"function_length_test: {rel}:{first} {fn} is {length} lines (at most {LIMIT})", file=sys.stderr)
                        bad += 1
    if checked == 0:
        print(f"function_length_test: found no functions under {folders} in {root}", file=sys.stderr)
        return 1
    if bad == 0:
        print(f"function_length_test: {checked} functions under {' '.join(folders)}, none over {LIMIT} lines")
    return 1 if bad else 0


def self_test():
    # Copy tools/, add one function of LIMIT + 1 lines and one of LIMIT, and
    # expect exactly the long one to fail: a checker that passes everything,
    # or one that counts a line too many, would show here.
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copytree(os.path.join(root, "tools"), os.path.join(scratch, "tools"))
        with open(os.path.join(scratch, "tools", "long.cc"), "w") as f:
            for name, lines in (("just_fits", LIMIT), ("too_long", LIMIT + 1)):
                f.write(f"namespace x {{\nint {name}(int a) {{\n")
                f.write("  a += 1;  // '{' in a comment\n" * (lines - 3))
                f.write('  return a + sizeof("}");\n}\n}  // namespace x\n')
        run = subprocess.run([sys.executable, __file__, scratch, "tools"], capture_output=True, text=True)
        if run.returncode == 0 or "too_long" not in run.stderr or "just_fits" in run.stderr:
            print("function_length_test: FAIL: the self-test's functions were not judged right:\n" + run.stderr,
                  file=sys.stderr)
            return 1
    print(f"function_length_test: self-test ok (a {LIMIT + 1}-line function fails, a {LIMIT}-line one passes)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--self-test"]:
        sys.exit(self_test())
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(check(root, sys.argv[2:] or ["tools"]))
