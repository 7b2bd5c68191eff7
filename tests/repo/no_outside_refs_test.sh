#!/usr/bin/env bash
# The repository must stand on its own: someone who clones it has only what
# is in it. This test fails when a file points at the design notes the
# project was started from, which live outside the repository (a path into
# a sibling "shared" folder, or the notes' file names). Point at
# docs/api.md, docs/feed-format.md or docs/architecture.md instead.
#
# Usage: no_outside_refs_test.sh [REPO_ROOT]   (default: two levels up)
# Checks the files git knows (tracked, or new and not ignored); without git,
# every file outside build*/, .git/ and node_modules/.
set -euo pipefail

root=${1:-"$(cd "$(dirname "$0")/../.." && pwd)"}
cd "$root"

# Built from pieces so that this file does not match itself.
patterns=("../""shared" "SPEC"".md" "DESIGN"".md" "FEED-FORMAT"".md")
grep_args=(-H -n -I -F)
for p in "${patterns[@]}"; do grep_args+=(-e "$p"); done

list_files() {
  if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$root" ls-files -z --cached --others --exclude-standard
  else
    find . \( -name 'build*' -o -name .git -o -name node_modules \) -prune -o -type f -print0 | sed -z 's|^\./||'
  fi
}

# The matcher must find a reference when there is one: check it on a
# scratch file first, so a broken grep cannot pass vacuously.
probe=$(mktemp)
trap 'rm -f "$probe"' EXIT
for p in "${patterns[@]}"; do
  printf 'see %s for the rest\n' "$p" >"$probe"
  if ! grep -q "${grep_args[@]}" "$probe"; then
    echo "FAIL: the matcher does not find '$p'" >&2
    exit 1
  fi
done

mapfile -d '' files < <(list_files)
# Deleted but not yet committed files are still listed by git; skip them.
present=()
for f in "${files[@]}"; do [[ -f $f ]] && present+=("$f"); done
if ((${#present[@]} < 10)) || [[ ! " ${present[*]} " == *" README.md "* ]]; then
  echo "FAIL: listed only ${#present[@]} files in $root (README.md among them?)" >&2
  exit 1
fi

hits=$(printf '%s\0' "${present[@]}" | xargs -0 grep "${grep_args[@]}" -- 2>/dev/null || true)
if [[ -n $hits ]]; then
  echo "FAIL: references to documents outside the repository:" >&2
  echo "$hits" >&2
  echo "($(printf '%s\n' "$hits" | wc -l) lines; point at the repository's own docs instead)" >&2
  exit 1
fi
echo "ok: ${#present[@]} files, no reference outside the repository"
