"""Shared helpers of the history/CI end-to-end tests: run the real binary
with a clean environment (no CI variables, fixed clock), small test
runner printing "N passed, N failed"."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
EXAMPLES = os.path.join(SRC, "examples")
TMP = tempfile.mkdtemp(prefix="cloudfit-hist-")


def clean_env(**extra):
    """No CI variables, a fixed clock (SOURCE_DATE_EPOCH, unless given)."""
    return pyharness.clean_env(TMP, **{"SOURCE_DATE_EPOCH": "1795000000", **extra})


ENV = clean_env()


def run(*args, env=None, cwd=None):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=env or ENV, timeout=120, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def example(name):
    return os.path.join(EXAMPLES, name)


def tmp(name):
    return os.path.join(TMP, name)


def write(name, text):
    path = tmp(name)
    with open(path, "w") as f:
        f.write(text)
    return path


def spec_variant(stem, /, **changes):
    """A copy of examples/resnet18-cifar10.json with top-level sections updated."""
    spec = json.load(open(example("resnet18-cifar10.json")))
    for gpu, profile in spec.get("profile", {}).get("gpus", {}).items():
        if isinstance(profile, str):  # measurement CSVs are relative to the spec's folder
            spec["profile"]["gpus"][gpu] = os.path.join(EXAMPLES, profile)
    for key, value in changes.items():
        if isinstance(value, dict):
            spec.setdefault(key, {}).update(value)
        else:
            spec[key] = value
    return write(stem + ".json", json.dumps(spec))


def query(db, sql, *args):
    with sqlite3.connect(db) as con:
        return con.execute(sql, args).fetchall()


def main(namespace):
    return pyharness.run(namespace)
