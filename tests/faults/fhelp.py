"""Shared helpers of the fault, parsing and security tests (tests/faults/):
the real binary with a clean environment, temporary files, probe scripts,
database checks, process checks. Usage of every test file:
    test_X.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), sys.argv[2]
EXAMPLES = os.path.join(SRC, "examples")
PY = "/usr/bin/python3"
TMP = pyharness.temp_dir(prefix="cloudfit-faults-")
Skip = pyharness.Skip  # a test that cannot run here: counted as skipped, never as passed


def clean_env(**extra):
    """No CI variables and none of cloudfit's own settings; stops quick."""
    return pyharness.clean_env(TMP, strip=("CLOUDFIT_",), **{"CLOUDFIT_STOP_GRACE_S": "2", **extra})


ENV = clean_env()
_n = [0]


def tmp(name=None):
    """A new path (or a new folder when name is None) under TMP."""
    _n[0] += 1
    if name is None:
        path = os.path.join(TMP, "d%d" % _n[0])
        os.makedirs(path)
        return path
    return os.path.join(TMP, "%d-%s" % (_n[0], name))


def write(name, text, mode=None):
    path = tmp(name)
    with open(path, "w" if isinstance(text, str) else "wb") as f:
        f.write(text)
    if mode:
        os.chmod(path, mode)
    return path


def run(*args, env=None, timeout=120, cwd=None, input=None):
    p = subprocess.run([BIN, *args], capture_output=True, env=env or ENV, timeout=timeout, cwd=cwd, input=input)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def run_bytes(*args, env=None, timeout=120):
    p = subprocess.run([BIN, *args], capture_output=True, env=env or ENV, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def example(name):
    return os.path.join(EXAMPLES, name)


def spec_file(name, **sections):
    """A small valid spec (recommend works on it), sections replaced."""
    spec = {"name": name, "model": {"parameters": 25557032}, "data": {"samples": 1281167},
            "training": {"epochs": 90, "batch": 256, "lr": 0.1, "optimizer": "momentum"},
            "profile": {"noise_scale": 4000}, "search": {"objective": "cost", "deadline_hours": 48}}
    spec.update(sections)
    return write(name + ".json", json.dumps(spec))


def exec_spec(name, script, batches=(8,), steps=3):
    """A spec whose profile.command runs a Python probe script."""
    path = write(name + ".py", script)
    return spec_file(name, model={"parameters": 1000000, "flops_per_sample": 1e9}, data={"samples": 10000},
                     training={"epochs": 1, "batch": 32, "lr": 0.1},
                     profile={"backend": "exec", "command": [PY, path], "local_batches": list(batches),
                              "steps": steps})


# A probe that speaks the protocol correctly (docs/exec-protocol.md).
GOOD_PROBE = r'''
import json, os, sys
w, n = int(os.environ["CLOUDFIT_WARMUP_STEPS"]), int(os.environ["CLOUDFIT_STEPS"])
b = int(os.environ["CLOUDFIT_LOCAL_BATCH"]); k = int(os.environ["CLOUDFIT_MICRO_BATCHES"])
print(json.dumps({"event": "device", "name": "NVIDIA A100-SXM4-40GB", "memory_gib": 40}), flush=True)
for i in range(w + n):
    print(json.dumps({"event": "step", "step": i + 1, "time_s": 0.01 + 0.001 * b, "samples": b * k,
                      "micro_sqnorms": [2.0 + 0.1 * j for j in range(k)], "mean_sqnorm": 1.0}), flush=True)
print(json.dumps({"event": "done"}), flush=True)
'''


def db_rows(db, table):
    if not os.path.exists(db):
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("SELECT count(*) FROM %s" % table).fetchone()[0]


def db_ok(db):
    """The database opens and passes SQLite's own checks."""
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    return True


def alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_for(pred, timeout=20, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def pids_in(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [int(x) for x in f.read().split()]


def have_unshare():
    """Mount namespaces (root, or unprivileged user namespaces): for a
    read-only folder or a full disk that even root cannot write."""
    if not shutil.which("unshare"):
        return False
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    return p.returncode == 0


def in_mount_ns(setup, argv, env=None, timeout=120):
    """Runs `setup` (a shell snippet: mounts) then argv in a private mount
    namespace; returns (rc, stdout, stderr)."""
    script = setup + '\nexec "$@"'
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *argv],
                       capture_output=True, env=env or ENV, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def main(namespace):
    sys.exit(pyharness.run(namespace))
