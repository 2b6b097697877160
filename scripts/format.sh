#!/usr/bin/env bash
# Usage: scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

required=14
clang_format=$(command -v clang-format-$required || command -v clang-format || true)
if [[ -z $clang_format ]]; then
  echo "format.sh: clang-format $required not found" >&2
  exit 1
fi
version=$("$clang_format" --version | grep -oE 'version [0-9]+' | grep -oE '[0-9]+')
if [[ $version != "$required" ]]; then
  echo "format.sh: need clang-format $required, $clang_format is version $version" >&2
  exit 1
fi

mode=(-i)
[[ ${1:-} == --check ]] && mode=(--dry-run --Werror)

mapfile -t files < <(find src test_common unit_tests examples perf_tests python/src fuzz -type f \( -name '*.hpp' -o -name '*.cpp' \) | sort)
[[ ${#files[@]} -eq 0 ]] && exit 0
"$clang_format" "${mode[@]}" "${files[@]}"
