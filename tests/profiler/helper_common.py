"""What the tests of the cloudfit_probe helper share (test_probe_helper*.py):
the check for PyTorch (Skipped, exit 77, without it), a temporary folder,
an environment with the helper on PYTHONPATH, specs whose profile.command
runs a probe, `cloudfit profile`, and a probe run by hand."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
PYTHON = "/usr/bin/python3"


def require(module, package):
    """Exit 77 (ctest: Skipped) when /usr/bin/python3 cannot import `module`."""
    if subprocess.run([PYTHON, "-c", "import " + module], capture_output=True).returncode != 0:
        print(f"skipped: {module} is not installed for {PYTHON} (apt-get install {package})")
        sys.exit(77)


require("torch", "python3-torch")
TMP = tempfile.mkdtemp(prefix="cloudfit-helper-")
HELPER = os.path.join(SRC, "python")
ENV = pyharness.clean_env(TMP, PYTHONPATH=HELPER, OMP_NUM_THREADS=1)


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def spec_file(name, command, batch, batches=(8, 16), steps=3, model=None):
    """A spec whose profile.command is `command`, recipe batch `batch`."""
    spec = {"name": name, "model": model or {"parameters": 10000, "flops_per_sample": 1e6},
            "data": {"samples": 4096, "source": "synthetic"},
            "training": {"epochs": 20, "batch": batch, "lr": 0.05, "optimizer": "sgd"},
            "profile": {"backend": "exec", "command": command, "local_batches": list(batches), "steps": steps}}
    return write(name + ".json", json.dumps(spec))


def profile(spec, backend="exec", *extra):
    """`cloudfit profile --format json` in a database of its own: (rc, stdout, stderr)."""
    db = os.path.join(TMP, os.path.basename(spec) + "." + backend + ".db")
    p = subprocess.run([BIN, "profile", "-q", "--db", db, "--format", "json", "--backend", backend, *extra, spec],
                       capture_output=True, text=True, env=ENV, timeout=300)
    return p.returncode, p.stdout, p.stderr


def probe_lines(script_args, **run_env):
    """Runs a probe by hand with the CLOUDFIT_* variables: its JSON lines and stderr."""
    env = dict(ENV, **{k: str(v) for k, v in run_env.items()})
    try:
        p = subprocess.run([PYTHON, *script_args], capture_output=True, text=True, env=env, timeout=180)
    except subprocess.TimeoutExpired as e:  # what it said before it stalled is the diagnosis
        raise AssertionError(f"{script_args[0]} ran past {e.timeout} s; stdout: {e.stdout!r}; stderr: {e.stderr!r}")
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()], p.stderr


def main(namespace):
    return pyharness.run(namespace, cleanup=lambda: shutil.rmtree(TMP, ignore_errors=True))
