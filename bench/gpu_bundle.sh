#!/usr/bin/env bash
# Packs what bench/gpu.sh runs into one folder for a GPU machine that has
# no Debian -dev packages, no cmake and no network: the four binaries
# (cloudfit, the CUDA engine module, the parity test, the kernel bench),
# stripped of debug information, in the build directory's layout, and in
# lib/ every shared library they need that is not the C runtime or CUDA's
# own (the GPU machine has a driver and CUDA's libraries, from its toolkit
# or PyTorch's wheels; gpu.sh finds them). Also DEST.tar.gz of it (about
# 22 MB; the folder is about 73 MB, mostly OpenBLAS). Then, there:
#   tar -xzf DEST.tar.gz && bench/gpu.sh DEST python3
# Usage: bench/gpu_bundle.sh BUILD_DIR DEST
set -euo pipefail
build=${1:?usage: bench/gpu_bundle.sh BUILD_DIR DEST}
dest=${2:?usage: bench/gpu_bundle.sh BUILD_DIR DEST}
files=(cli/cloudfit cuda_probe/libcloudfit_cuda.so tests/test_engine_parity bench/gpu_kernel_bench)
for f in "${files[@]}"; do
    [ -e "$build/$f" ] || { echo "gpu_bundle.sh: $build/$f is missing (build with CUDA first)" >&2; exit 2; }
done
mkdir -p "$dest/lib"
for f in "${files[@]}"; do
    mkdir -p "$dest/$(dirname "$f")"
    strip --strip-debug -o "$dest/$f" "$build/$f"
done
# Libraries by soname, resolved here; the C runtime, the dynamic loader and
# CUDA's libraries stay behind.
ldd "${files[@]/#/$build/}" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
    grep -v -E '^(libc|libm|libdl|libpthread|librt|libresolv|libutil|libnsl|libanl|libgcc_s|libstdc\+\+|ld-linux[^ ]*|libcuda|libcudart|libcublas|libcublasLt|libnvidia[^ ]*)\.so' |
    while read -r soname path; do
        cp -L "$path" "$dest/lib/$soname"
    done
# The parity test was linked with the build tree's module path: gpu.sh sets
# CLOUDFIT_CUDA_MODULE to DEST's copy.
tar -C "$(dirname "$dest")" -czf "$dest.tar.gz" "$(basename "$dest")"
du -sh "$dest" | awk '{print "gpu_bundle.sh: " $2 ": " $1 " (" n " shared libraries in lib/)"}' n="$(ls "$dest/lib" | wc -l)"
du -sh "$dest.tar.gz" | awk '{print "gpu_bundle.sh: " $2 ": " $1}'
