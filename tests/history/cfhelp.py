"""Shared helpers of the history/CI end-to-end tests: run the real binary
with a clean environment (no CI variables, fixed clock), small test
runner printing "N passed, N failed".

The same tests run on both backends (issue 28): the third argument is
`sqlite` (default) or `postgresql`. new_db(name) gives a fresh database
of the backend (an SQLite path, or a postgresql:// URL to a new database
on a throw-away cluster, tests/pgcluster.py); query() and check_db() read
it back with the backend's own client. Without PostgreSQL's server the
postgresql run prints why and exits 77 (CTest: skipped)."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

import pgcluster  # noqa: E402
from pyharness import Skip  # noqa: E402,F401

BIN, SRC = sys.argv[1], sys.argv[2]
BACKEND = sys.argv[3] if len(sys.argv) > 3 else "sqlite"
assert BACKEND in ("sqlite", "postgresql"), BACKEND
PG = BACKEND == "postgresql"
EXAMPLES = os.path.join(SRC, "examples")
TMP = tempfile.mkdtemp(prefix="cloudfit-hist-")
CLUSTER = None
if PG:
    if not pgcluster.find_bindir():
        print("SKIPPED: PostgreSQL's server (initdb, pg_ctl) is not installed; "
              "scripts/install-deps.sh test installs it (Debian package postgresql)")
        sys.exit(pgcluster.SKIP_RETURN_CODE)
    CLUSTER = pgcluster.Cluster()
    print(f"  a PostgreSQL cluster on {CLUSTER.socket_dir} started in {CLUSTER.startup_s:.1f} s", flush=True)


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


def new_db(name):
    """A new, empty database of the backend under test."""
    if PG:
        return CLUSTER.create_db(name)
    return tmp(name + ".db")


def query(db, sql, *args):
    """Rows of a query (`?` parameters) through the backend's own client."""
    if PG:
        return CLUSTER.sql(pgcluster.Cluster.dbname(db), sql, args)
    with sqlite3.connect(db) as con:
        return con.execute(sql, args).fetchall()


def add_copies(db, n, pg=PG):
    """Copies 2..n of recommendation 1 (ids 2..n), a second apart from
    2026-01-01 and a small document each, written with the backend's own SQL
    (`pg`: db is a postgresql:// URL, else an SQLite file)."""
    def sql(text):
        if pg:
            return query(db, text)
        with sqlite3.connect(db) as con:
            return con.execute(text).fetchall()
    if pg:
        cols = [r[0] for r in sql("SELECT column_name::text FROM information_schema.columns"
                                  " WHERE table_name = 'recommendations' ORDER BY ordinal_position")]
        created, rows = ("to_char(timestamp '2026-01-01' + n.i * interval '1 second', "
                         "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')", f"generate_series(1, {n - 1}) n(i)")
    else:
        cols = [r[1] for r in sql("PRAGMA table_info(recommendations)")]
        created, rows = ("strftime('%Y-%m-%dT%H:%M:%SZ', '2026-01-01', '+' || n.i || ' seconds')",
                         f"(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n - 1})"
                         " SELECT i FROM n) n")
    cols = [c for c in cols if c not in ("id", "uid")]
    picked = ", ".join(created if c == "created_at" else "'{}'" if c == "result_json" else "r." + c for c in cols)
    sql(f"INSERT INTO recommendations({', '.join(cols)}, uid) SELECT {picked}, 'copy' || n.i "
        f"FROM {rows}, recommendations r WHERE r.id = 1")


def check_db(db):
    """The database is whole: SQLite's integrity and foreign-key checks; on
    PostgreSQL (which enforces foreign keys itself) no child row without
    its recommendation."""
    if PG:
        for child in ("alternatives", "ci_runs", "gate_results"):
            assert query(db, f"SELECT count(*) FROM {child} WHERE recommendation_id NOT IN "
                         "(SELECT id FROM recommendations)") == [(0,)], child
        return
    assert query(db, "PRAGMA integrity_check") == [("ok",)]
    assert query(db, "PRAGMA foreign_key_check") == []


def sqlite_only(why):
    """A test of something only the SQLite file has (its pages, its modes)."""
    if PG:
        raise Skip("SQLite only: " + why)


def main(namespace):
    return pyharness.run(namespace, cleanup=CLUSTER.stop if CLUSTER else None)
