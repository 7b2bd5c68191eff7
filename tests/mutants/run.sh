#!/usr/bin/env bash
# Mutant run for developers and reviewers (not part of .ci/run): applies each
# mutant in tests/mutants/cases/ to a scratch copy of the working tree and
# reports which of the tests named for it kill it. See tests/mutants/README.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Debian's python3: the e2e tests need its python3-websockets.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" "$here/runner.py" "$@"
