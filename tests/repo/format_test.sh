#!/usr/bin/env bash
# Product and test code keep one format, the repository's .clang-format
# (Google style, 120 columns, sorted includes), checked with Debian's
# clang-format so that a diff shows changes, never re-wrapping. Fix with:
#   git ls-files '*.cc' '*.h' | grep -v '^perf/' | xargs clang-format -i
# Usage: format_test.sh [REPO_ROOT]  (default: two levels up)
set -euo pipefail
root=${1:-"$(cd "$(dirname "$0")/../.." && pwd)"}
cd "$root"
command -v clang-format >/dev/null || { echo "format_test: clang-format is not installed (scripts/install-deps.sh)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -v '^perf/')
[ ${#files[@]} -gt 0 ] || { echo "format_test: no source files found under $root" >&2; exit 1; }
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/format_test.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/format_test.$$ | cut -d: -f1 | sort -u | sed 's/^/format_test: not formatted: /' >&2
  head -40 /tmp/format_test.$$ >&2
  rm -f /tmp/format_test.$$
  exit 1
fi
rm -f /tmp/format_test.$$
echo "format_test: ${#files[@]} files formatted as .clang-format says"
