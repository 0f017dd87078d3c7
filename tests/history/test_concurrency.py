#!/usr/bin/python3
"""Many writers on one history database, and writers killed mid-write.
- concurrency: 20 `cloudfit recommend` processes at once (repeated in
  waves) against one new database: every row is there, the database is
  whole (SQLite: integrity_check), no process fails, none says "database
  is locked".
- crash: writers SIGKILLed at random moments spread over their lifetime
  (most land in the open/migrate/insert phase, measured below); afterwards
  the database opens, is whole, and holds only whole recommendations
  (every row's alternatives match its JSON document).
Both backends (cfhelp.py): on PostgreSQL the first wave also races on
creating the tables of a new database.
Usage: test_concurrency.py CLOUDFIT_BINARY SOURCE_DIR [sqlite|postgresql]"""
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cfhelp import BIN, ENV, PG, check_db, example, main, new_db, query, run  # noqa: E402

SPEC = example("resnet18-cifar10.json")
WRITERS = 20
WAVES = 2
KILLS = 40
# Many alternatives make each transaction larger (more rows to cut through).
ARGS = ["recommend", "--cloud", "gcp", "-n", "60", "-f", "json", "-q"]


def start(db, extra=()):
    return subprocess.Popen([BIN, *ARGS, "--db", db, *extra, SPEC], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=ENV, text=True)


def whole(db):
    """Every recommendation has all its alternatives and a parseable document."""
    check_db(db)
    rows = query(db, "SELECT r.id, r.result_json, r.instance_type, (SELECT count(*) FROM alternatives a"
                     " WHERE a.recommendation_id = r.id) FROM recommendations r")
    for rid, text, instance, n in rows:
        doc = json.loads(text)
        assert doc["chosen"]["instance_type"] == instance
        assert n == len(doc["alternatives"]), (rid, n, len(doc["alternatives"]))
    orphans = query(db, "SELECT count(*) FROM alternatives WHERE recommendation_id NOT IN "
                        "(SELECT id FROM recommendations)")[0][0]
    assert orphans == 0
    return len(rows)


def test_parallel_writers():
    db = new_db("parallel")  # new: the first wave also races on the migrations
    total = 0
    for wave in range(WAVES):
        procs = [start(db) for _ in range(WRITERS)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, (p.returncode, err)
            assert "locked" not in err and "busy" not in err, err
        total += WRITERS
    assert whole(db) == total
    if not PG:
        assert query(db, "PRAGMA journal_mode") == [("wal",)]
    rc, out, err = run("history", "--db", db, "--limit", "1000", "-f", "json")
    assert rc == 0 and len(json.loads(out)) == total


def test_sigkill_mid_write():
    db = new_db("crash")
    # How long a writer lives beside another, to spread the kills over its
    # life: the median of 5 pairs after a first writer has made the schema
    # (one slow calibration on a loaded machine put every kill after the end).
    start(db).communicate(timeout=120)
    lives = []
    for _ in range(5):
        t0 = time.monotonic()
        for p in [start(db) for _ in range(2)]:
            p.communicate(timeout=120)
        lives.append(time.monotonic() - t0)
    life_s = sorted(lives)[2]
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
    assert rows >= completed + 11, (rows, completed)  # killed ones may have committed just before the kill
    print(f"  {rows} whole recommendations stored; {rows - completed - 11} of them by writers killed after COMMIT")
    # The database is still usable for writing afterwards.
    rc, out, err = run("recommend", "--db", db, "--cloud", "gcp", "-q", SPEC)
    assert rc == 0, err
    assert whole(db) == rows + 1


if __name__ == "__main__":
    sys.exit(main(globals()))
