#!/usr/bin/env bash
# Installs cloudfit's build and test dependencies from Debian packages.
# Runs as root, or through sudo when not root.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libcjson-dev libgsl-dev libsqlite3-dev libcurl4-openssl-dev nettle-dev
  libcmocka-dev libopenblas-dev libcsv-dev libyaml-dev
  python3 python3-jsonschema python3-yaml python3-numpy sqlite3
  python3-torch
  chromium zsh tmux
  # reliability (docs/reliability.md): clang with libFuzzer and the
  # sanitizer runtimes, valgrind, openssl (the TLS test's certificate),
  # util-linux (unshare: read-only and full file systems in the tests)
  clang libclang-rt-dev valgrind openssl util-linux
)
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update
"${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
