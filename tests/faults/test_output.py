#!/usr/bin/python3
"""One output path (issue 26): every command, its result written to a full
disk (/dev/full), exits 1 with the same message and stores nothing: no
history row, measurement, profile, price snapshot or search run, and a
prune deletes nothing. Each case runs again with standard output to a pipe
(exit 0, and the commands that store something do store it), so a case
that fails for another reason, or stores nothing anyway, is seen. Every
command of `cloudfit --help` has a case.
Usage: test_output.py CLOUDFIT_BINARY SOURCE_DIR"""
import os
import sqlite3
import subprocess
import sys

from fhelp import BIN, ENV, GOOD_PROBE, SRC, example, exec_spec, main, tmp

sys.path.insert(0, os.path.join(SRC, "tests", "pricing"))
from fixture_server import FixtureServer  # noqa: E402

TABLES = ("recommendations", "alternatives", "specs", "ci_runs", "gate_results", "measurements", "profiles",
          "price_snapshots", "search_runs", "search_probes")
PRIMARY = ("recommendations", "measurements", "profiles", "price_snapshots", "search_runs")
SPEC = example("resnet50-imagenet.json")
TRACE = os.path.join(SRC, "examples", "spot-traces", "availability_1node_02-15-2023_us-east-1a_V100x1.csv")
PROFILE = os.path.join(SRC, "examples", "data", "resnet50-t4-profile.csv")
FULL = "cannot write the result to standard output: No space left on device"


def counts(db):
    if not os.path.exists(db):
        return {}
    with sqlite3.connect(db) as con:
        return {t: con.execute("SELECT count(*) FROM %s" % t).fetchone()[0] for t in TABLES}


def commands():
    p = subprocess.run([BIN, "--help"], capture_output=True, text=True, env=ENV)
    names = []
    listing = False
    for line in p.stdout.splitlines():
        if line == "commands:":
            listing = True
        elif listing and line.startswith("  ") and not line.startswith("   "):
            names.append(line.split()[0])
        elif listing and not line.strip():
            break
    assert len(names) >= 10, p.stdout
    return names


def run(args, env, stdout, stdin=None):
    with open(os.devnull, "rb") if stdin is None else open(stdin, "rb") as inp:
        p = subprocess.run([BIN, *args], stdout=stdout, stderr=subprocess.PIPE, stdin=inp, env=env, timeout=120)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def setup():
    """A history with two recommendations, the environment every case runs in."""
    home = tmp()
    db = os.path.join(home, "h.db")
    env = dict(ENV, HOME=home, XDG_CONFIG_HOME=home, CLOUDFIT_DB=db)
    for extra in ([], ["--spot", "allow"]):
        rc, err = run(["recommend", "-q", *extra, SPEC], env, subprocess.PIPE)
        assert rc == 0, err
    return home, db, env


def cases(home, db):
    """(command, args, stdin, what the control run stores: {table: rows added}) per case."""
    times = os.path.join(home, "times.jsonl")
    with open(times, "w") as f:
        f.write('{"compute_s": [1.0, 2.0]}\n')
    probe_spec = exec_spec("outprobe", GOOD_PROBE)
    moved = os.path.join(home, "copy.db")
    return [
        ("recommend", ["recommend", SPEC], None, {"recommendations": 1}),
        ("recommend", ["recommend", "-f", "json", "--spot", "allow", SPEC], None, {"recommendations": 1}),
        ("recommend", ["recommend", "-f", "markdown", SPEC], None, {"recommendations": 1}),
        ("record", ["record", "1", "--step-time-s", "0.4"], None, {"measurements": 1}),
        ("history", ["history"], None, {}),
        ("history", ["history", "show", "1", "-f", "json"], None, {}),
        ("history", ["history", "diff", "1", "2"], None, {}),
        ("history", ["history", "migrate", "--to", moved], None, {}),
        ("history", ["history", "prune", "--older-than", "2999-01-01T00:00:00Z"], None, {}),
        ("search", ["search", "--runner", "trace:" + PROFILE, "--trace-model", "imagenet", "--gpu", "T4",
                    "--cloud", "aws", SPEC], None, {"search_runs": 1}),
        ("profile", ["profile", probe_spec], None, {"profiles": 1}),
        ("prices", ["prices"], None, {}),
        ("prices", ["prices", "T4", "-f", "json"], None, {}),
        ("prices", ["prices", "update", "--cloud", "azure", "--region", "eastus"], None, {"price_snapshots": 1}),
        ("validate", ["validate", PROFILE], None, {}),
        ("simulate", ["simulate", SPEC, "--trace", TRACE], None, {}),
        ("rebalance", ["rebalance", "--global-batch", "64", "--workers", "2"], times, {}),
        ("version", ["version"], None, {}),
        ("help", ["help"], None, {}),
        ("help", ["help", "--man"], None, {}),
        ("help", ["--help"], None, {}),
        ("help", ["recommend", "--help"], None, {}),
        ("completion", ["completion", "bash"], None, {}),
        ("completion", ["completion", "words", "commands"], None, {}),
        ("config", ["config", "show", "recommend"], None, {}),
        ("config", ["config", "--help"], None, {}),
    ]


def test_every_command_on_a_full_disk():
    home, db, env = setup()
    table = cases(home, db)
    missing = set(commands()) - {c[0] for c in table}
    assert not missing, "commands without a /dev/full case: %s" % sorted(missing)
    with FixtureServer() as server:
        env.update(server.env())
        for name, args, stdin, stores in table:
            before = counts(db)
            with open("/dev/full", "w") as full:
                rc, err = run(args, env, full, stdin)
            after = counts(db)
            assert rc == 1, (args, rc, err)
            if args[:2] != ["completion", "words"]:  # quiet: the shell is completing a word
                assert err.count(FULL) == 1, (args, err)
            assert after == before, (args, "stored although the result was not written", before, after)
            if "migrate" in args:
                assert sum(counts(args[-1]).values()) == 0, counts(args[-1])
            # the control: written to a pipe, the command works and stores what it stores
            rc, err = run(args, env, subprocess.PIPE, stdin)
            assert rc == 0, (args, rc, err)
            stored = counts(db)
            for t in PRIMARY:
                assert stored[t] - after[t] == stores.get(t, 0) or "prune" in args, (args, t, after, stored)
            if "prune" in args:
                assert stored["recommendations"] == 0 < after["recommendations"], (after, stored)
            if "migrate" in args:
                assert counts(args[-1])["recommendations"] == after["recommendations"], counts(args[-1])


if __name__ == "__main__":
    main(globals())
