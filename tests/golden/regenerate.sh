#!/bin/sh
# Regenerates every golden file in tests/golden/ from the cloudfit binary
# of a build directory (default: build). Review the diff before committing:
#   tests/golden/regenerate.sh build && git diff tests/golden/
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$src/$build" ;; esac
exec /usr/bin/python3 "$here/test_golden.py" "$build/cli/cloudfit" "$src" --update
