#!/usr/bin/python3
"""Many writers on one history database, and writers killed mid-write.
- concurrency: N >= 8 `cloudfit recommend` processes at once (repeated in
  waves) against one new database: every row is there, integrity_check is
  ok, no process fails, none says "database is locked".
- crash: writers SIGKILLed at random moments spread over their lifetime
  (most land in the open/migrate/insert phase, measured below); afterwards
  the database opens, passes integrity_check, and holds only whole
  recommendations (every row's alternatives match its JSON document).
Usage: test_concurrency.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cfhelp import BIN, ENV, example, main, query, run, tmp  # noqa: E402

SPEC = example("resnet18-cifar10.json")
WRITERS = 10
WAVES = 3
KILLS = 40
# Many alternatives make each transaction larger (more rows to cut through).
ARGS = ["recommend", "--cloud", "gcp", "-n", "60", "-f", "json", "-q"]


def start(db, extra=()):
    return subprocess.Popen([BIN, *ARGS, "--db", db, *extra, SPEC], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=ENV, text=True)


def whole(db):
    """Every recommendation has all its alternatives and a parseable document."""
    with sqlite3.connect(db) as con:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        rows = con.execute("SELECT id, result_json, instance_type FROM recommendations").fetchall()
        for rid, text, instance in rows:
            doc = json.loads(text)
            assert doc["chosen"]["instance_type"] == instance
            n = con.execute("SELECT count(*) FROM alternatives WHERE recommendation_id = ?", (rid,)).fetchone()[0]
            assert n == len(doc["alternatives"]), (rid, n, len(doc["alternatives"]))
        orphans = con.execute("SELECT count(*) FROM alternatives WHERE recommendation_id NOT IN "
                              "(SELECT id FROM recommendations)").fetchone()[0]
        assert orphans == 0
    return len(rows)


def test_parallel_writers():
    db = tmp("parallel.db")  # new: the first wave also races on the migrations
    total = 0
    for wave in range(WAVES):
        procs = [start(db) for _ in range(WRITERS)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, (p.returncode, err)
            assert "locked" not in err and "busy" not in err, err
        total += WRITERS
    assert whole(db) == total
    assert query(db, "PRAGMA journal_mode") == [("wal",)]
    rc, out, err = run("history", "--db", db, "--limit", "1000", "-f", "json")
    assert rc == 0 and len(json.loads(out)) == total


def test_sigkill_mid_write():
    db = tmp("crash.db")
    # How long one writer lives, to spread the kills over its life.
    t0 = time.monotonic()
    p = start(db)
    p.communicate(timeout=120)
    life_s = time.monotonic() - t0
    rng = random.Random(1795)
    killed = completed = 0
    for i in range(KILLS):
        procs = [start(db) for _ in range(2)]  # two at once: kills also hit lock waits
        time.sleep(rng.uniform(0.3, 1.1) * life_s)
        victim = procs[i % 2]
        if victim.poll() is None:
            os.kill(victim.pid, signal.SIGKILL)
        for p in procs:
            p.communicate(timeout=120)
            if p.returncode == -signal.SIGKILL:
                killed += 1
            else:
                assert p.returncode == 0, p.returncode
                completed += 1
    print(f"  {killed} writers killed, {completed} completed (one writer lives {1000 * life_s:.0f} ms)")
    assert killed >= KILLS // 4, "too few kills landed to test anything"
    rows = whole(db)
    assert rows >= completed + 1, (rows, completed)  # killed ones may have committed just before the kill
    print(f"  {rows} whole recommendations stored; {rows - completed - 1} of them by writers killed after COMMIT")
    # The database is still usable for writing afterwards.
    rc, out, err = run("recommend", "--db", db, "--cloud", "gcp", "-q", SPEC)
    assert rc == 0, err
    assert whole(db) == rows + 1


if __name__ == "__main__":
    sys.exit(main(globals()))
