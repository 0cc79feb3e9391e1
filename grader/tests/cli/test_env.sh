# Sourced by the shell tests of grader/tests/cli: REPO_ROOT and BUILD_DIR from the arguments ($root,
# $build), a scratch folder removed on exit ($tmp), and fail MESSAGE (prints, exits 1).
set -uo pipefail
root="$1"
build="${2:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
