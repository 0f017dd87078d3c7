#!/usr/bin/env bash
# Installs cloudfit's dependencies from Debian packages, in three groups:
#   build   what builds and runs cloudfit (a pipeline that only runs
#           `cloudfit recommend` needs this one alone: examples/ci/)
#   test    what the test suite needs beyond that (the Python harness and
#           validators, the sqlite3 client, PostgreSQL's server for the
#           throw-away cluster of tests/pgcluster.py, shellcheck, zsh,
#           tmux for the terminal-width tests)
#   extras  the heavy ones: PyTorch (launch-spec and probe checks),
#           Chromium (the HTML report rendered), clang and valgrind (the
#           sanitizer build, fuzzing, memcheck; docs/reliability.md)
# Usage: scripts/install-deps.sh [build] [test] [extras]   (none: all three)
# Runs as root, or through sudo when not root.
set -euo pipefail
build=(
  build-essential cmake pkg-config
  libcjson-dev libgsl-dev libsqlite3-dev libcurl4-openssl-dev nettle-dev
  libcmocka-dev libopenblas-dev libcsv-dev libyaml-dev libpq-dev
)
test=(
  python3 python3-jsonschema python3-yaml python3-numpy sqlite3
  postgresql shellcheck zsh tmux
  # reliability (docs/reliability.md): openssl (the TLS test's certificate),
  # util-linux (unshare: read-only and full file systems in the tests)
  openssl util-linux
  # binutils (nm: the layout test reads the symbols render/'s objects import)
  binutils
  # cmark-gfm (the markdown PR comment rendered as GitHub does: tests/report/test_markdown.py)
  cmark-gfm
)
extras=(
  python3-torch chromium
  clang libclang-rt-dev valgrind
)
groups=("$@")
if [ ${#groups[@]} -eq 0 ]; then groups=(build test extras); fi
packages=()
for g in "${groups[@]}"; do
  case "$g" in
    build) packages+=("${build[@]}") ;;
    test) packages+=("${test[@]}") ;;
    extras) packages+=("${extras[@]}") ;;
    *) echo "install-deps.sh: unknown group '$g' (build, test, extras)" >&2; exit 2 ;;
  esac
done
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update
"${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
