#!/usr/bin/python3
"""What the executable loads at start (docs/architecture.md "Start-up"): no
CUDA library (the GPU engine is a module loaded by the commands that use a
GPU), neither libcurl nor libpq (loaded by `prices update` and by a
postgresql:// history, the only users of them), and GSL's CBLAS is OpenBLAS — linked into the executable (the
default: CLOUDFIT_STATIC_OPENBLAS) or the shared libopenblas — never the
reference libgslcblas that Debian's libgsl also names.
Usage: test_startup.py CLOUDFIT_BINARY SOURCE_DIR"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), sys.argv[2]
TMP = pyharness.temp_dir(prefix="cloudfit-startup-")
ENV = pyharness.clean_env(TMP, strip=("CLOUDFIT_",))


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def test_no_cuda_library_is_linked():
    names = needed(BIN)
    assert any(n.startswith("libgsl.so") for n in names), names
    cuda = [n for n in names if re.match(r"lib(cuda|cudart|cublas|cublasLt|nccl)\b", n)]
    assert not cuda, "the executable links CUDA libraries: %s" % cuda


def test_network_and_postgresql_libraries_load_on_first_use():
    """libpq and its 20 libraries cost every command ~5 ms of start-up when
    linked (issue 28 had linked it); libcurl a third of the start-up."""
    names = needed(BIN)
    linked = [n for n in names if re.match(r"lib(pq|curl)\.so", n)]
    assert not linked, "the executable links %s (they are loaded on first use)" % linked


def test_without_libpq_a_postgresql_history_is_unavailable_and_the_rest_works():
    """libpq hidden (an empty file mounted over it in a private mount
    namespace): a postgresql:// history exits 6 naming the library and the
    package, with the password kept out; a recommendation stored in SQLite
    is untouched."""
    lib = None
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib"):
        if os.path.exists(os.path.join(d, "libpq.so.5")):
            lib = os.path.realpath(os.path.join(d, "libpq.so.5"))
            break
    if not lib or not shutil.which("unshare"):
        raise pyharness.Skip("no libpq.so.5 or no unshare(1) here")
    empty = os.path.join(TMP, "empty.so")
    open(empty, "w").close()
    script = ('mount --bind "$1" "$2" || exit 77; "$3" history --db postgresql://ci:s3cret@127.0.0.1:1/x; '
              'echo "rc=$?"; "$3" recommend -q --db "$4" "$5" >/dev/null; echo "sqlite=$?"')
    p = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", empty, lib, BIN, os.path.join(TMP, "h.db"),
                        os.path.join(SRC, "examples", "mlp-synthetic.json")],
                       capture_output=True, text=True, timeout=60, env=ENV)
    if p.returncode == 77 or "rc=" not in p.stdout:
        raise pyharness.Skip("no private mount namespace here: %s" % p.stderr.strip()[:200])
    assert "rc=6" in p.stdout and "sqlite=0" in p.stdout, (p.stdout, p.stderr)
    assert "cannot load libpq (libpq.so.5)" in p.stderr and "libpq5" in p.stderr, p.stderr
    assert "s3cret" not in p.stderr + p.stdout, p.stderr


def test_gsl_calls_openblas():
    # Bound at start (LD_BIND_NOW), so every symbol libgsl takes is in the loader's report.
    p = subprocess.run([BIN, "--help"], capture_output=True, text=True, timeout=60,
                       env=dict(ENV, LD_BIND_NOW="1", LD_DEBUG="bindings"))
    assert p.returncode == 0, p.stderr[-2000:]
    bindings = re.findall(r"binding file (\S*libgsl\.so[^ ]*) \[\d+\] to (\S+) \[\d+\]: normal symbol `(cblas_\w+)'",
                          p.stderr)
    symbols = {sym for _, _, sym in bindings}
    assert {"cblas_dgemm", "cblas_dnrm2", "cblas_dtrsv"} <= symbols, sorted(symbols)[:20]
    for _, target, sym in bindings:
        is_exe = os.path.realpath(target) == os.path.realpath(BIN)
        assert is_exe or "openblas" in target, "libgsl takes %s from %s, not OpenBLAS" % (sym, target)
    if "libopenblas.so.0" not in needed(BIN):  # linked in: libgsl binds to the executable itself
        assert all(os.path.realpath(t) == os.path.realpath(BIN) for _, t, _ in bindings)


if __name__ == "__main__":
    sys.exit(pyharness.run(dict(globals())))
