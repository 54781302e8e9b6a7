#!/usr/bin/env bash
# Fails when a C file in the tree differs from what .clang-format asks for.
set -euo pipefail
fmt=${1:-clang-format}
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.h' 2>/dev/null || find src tests fuzz -name '*.[ch]')
[ ${#files[@]} -gt 0 ] || { echo "no C files found"; exit 1; }
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! "$fmt" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run: $fmt -i $f)"; bad=1
  fi
done
[ $bad -eq 0 ] && echo "${#files[@]} files formatted"
exit $bad
