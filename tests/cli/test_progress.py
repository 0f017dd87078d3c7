#!/usr/bin/python3
"""End-to-end tests of the progress display (cli/term/progress.c) in the
four long commands: profile, search, prices update and validate on a large
file. On a terminal (a pseudo-terminal here) a bar redrawn in place; on a
pipe plain lines, the first at once and then periodic
(CLOUDFIT_PROGRESS_INTERVAL_S); nothing with -q; results on stdout only.
Usage: test_progress.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "pricing"))
import pyharness  # noqa: E402
from fixture_server import FixtureServer  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
TMP = pyharness.temp_dir(prefix="cloudfit-progress-")
TRACE = os.path.join(SRC, "tests", "data", "search-t4-imagenet.csv")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("CLOUDFIT_") and k not in ("CI", "NO_COLOR")}
ENV.update(HOME=TMP, XDG_DATA_HOME=os.path.join(TMP, "xdg"), XDG_CONFIG_HOME=os.path.join(TMP, "cfg"))
BAR = "\r\x1b[K"


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


SPEC = write("imagenet.json", json.dumps({
    "name": "imagenet", "model": {"parameters": 25557032}, "data": {"samples": 1281167},
    "training": {"epochs": 90, "batch": 200, "lr": 0.08, "optimizer": "momentum"},
    "profile": {"noise_scale": 4000}, "search": {"objective": "cost", "deadline_hours": 30}}))


def piped(args, env=None, **extra):
    e = dict(env or ENV, **{k: str(v) for k, v in extra.items()})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=e, timeout=300)
    return p.returncode, p.stdout, p.stderr


def on_terminal(args, env=None, **extra):
    """stdout and stderr on one pseudo-terminal: (exit code, everything printed)."""
    return pyharness.on_terminal([BIN, *args], dict(env or ENV, **{k: str(v) for k, v in extra.items()}))


def lines_of(err, label):
    """Progress lines: the label, then a count."""
    return [line for line in err.splitlines() if re.match(re.escape(label) + r": [0-9]", line)]


def check_command(args, label, unit, env=None, min_updates=2):
    """The four behaviours for one command."""
    rc, out, err = piped(args, env, CLOUDFIT_PROGRESS_INTERVAL_S=0)
    assert rc == 0, err
    every = lines_of(err, label)
    assert len(every) >= min_updates and all(unit in line for line in every), (label, err[-2000:])
    assert BAR not in err and "\x1b" not in err, "a bar outside a terminal"
    assert not lines_of(out, label), "progress on stdout"
    rc, out, err = piped(args, env, CLOUDFIT_PROGRESS_INTERVAL_S=3600)
    periodic = lines_of(err, label)
    assert rc == 0 and 1 <= len(periodic) < len(every), (label, len(periodic), len(every))
    rc, out, err = piped([*args, "-q"], env, CLOUDFIT_PROGRESS_INTERVAL_S=0)
    assert rc == 0 and not lines_of(err, label), f"-q: {err[-1000:]}"
    rc, text = on_terminal(args, env)
    assert rc == 0, text[-2000:]
    assert BAR + label + " [" in text and unit in text, (label, text[-2000:])
    return every


def test_search_progress():
    every = check_command(["search", SPEC, "--runner", "trace:" + TRACE, "--no-history", "--max-probes", "6"],
                          "search", "runs")
    assert any("≤" in line for line in every), every  # the total is an upper bound: the search may stop early
    assert any("profile " in line for line in every) and any("probe " in line for line in every), every
    # the model alone runs the light profile and no probe: the bound is the profile's runs, not + --max-probes
    rc, out, err = piped(["search", SPEC, "--runner", "trace:" + TRACE, "--no-history", "--method", "model"], None,
                         CLOUDFIT_PROGRESS_INTERVAL_S=0)
    runs = lines_of(err, "search")
    assert rc == 0 and runs and all("/≤ %d runs" % len(runs) in line for line in runs), runs


def test_profile_through_a_runner_progress():
    db = os.path.join(TMP, "p.db")
    check_command(["profile", SPEC, "--runner", "trace:" + TRACE, "--gpu", "T4", "--db", db], "profile", "runs")


def test_validate_progress_on_a_large_file_only():
    rows = open(TRACE).read().splitlines()
    header, body = rows[0], rows[1:]
    big = os.path.join(TMP, "big.csv")
    with open(big, "w") as f:
        f.write(header + "\n")
        size = 0
        while size < 9 << 20:
            chunk = "\n".join(body) + "\n"
            f.write(chunk)
            size += len(chunk)
    every = check_command(["validate", big], "validate", "rows")
    assert every[-1].startswith("validate: ") and "(100%)" in every[-1], every[-1]
    rc, out, err = piped(["validate", TRACE], CLOUDFIT_PROGRESS_INTERVAL_S=0)
    assert rc == 0 and not lines_of(err, "validate"), "a small file has no progress display"


def test_prices_update_progress():
    with FixtureServer() as s:
        env = dict(ENV, **s.env())
        db = os.path.join(TMP, "prices.db")
        every = check_command(["prices", "update", "--cloud", "azure", "--db", db], "prices update", "B",
                              env=env, min_updates=1)
        assert all(" of " in line or " B" in line for line in every), every
        rc, out, err = piped(["prices", "update", "--cloud", "azure", "--db", db], env)
        assert rc == 0 and "azure: fetching" in err, err  # the step lines stay


if __name__ == "__main__":
    sys.exit(pyharness.run(dict(globals())))
