#!/usr/bin/python3
"""Files and the database under faults (docs/reliability.md): --out-file
and history-folder failures are exit 1 naming the path; the history row is
committed before the out-file appears; a lock held by another process is a
bounded wait then an error naming the lock; read commands neither write,
migrate nor wait; a read-only folder, a full disk, a damaged or truncated
database: a clear error, the previous state intact, never recreated; the
database 0600 in a 0700 folder whatever the umask; only regular files are
read, within size limits.
Usage: test_storage.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import resource
import shutil
import sqlite3
import stat
import subprocess
import tempfile
import threading
import time

from fhelp import (BIN, ENV, PY, Skip, db_ok, db_rows, example, have_unshare, in_mount_ns, main, run, spec_file,
                   tmp, write)

SPEC = example("resnet18-cifar10.json")


def recommend(db, *extra, env=None):
    return run("recommend", "--db", db, "-q", *extra, SPEC, env=env)


def fresh_db():
    db = tmp("h.db")
    rc, out, err = recommend(db)
    assert rc == 0, err
    return db


def test_out_file_unwritable_is_exit_1_naming_it_and_records_nothing():
    db = fresh_db()
    target = os.path.join(tmp(), "no", "such", "dir", "result.json")
    rc, out, err = recommend(db, "--out-file", target, "-f", "json")
    assert rc == 1, (rc, err)
    assert "cannot write '%s'" % target in err and ".cloudfit-" not in err and ".tmp" not in err, err
    assert db_rows(db, "recommendations") == 1  # no history row for a result nobody got


def test_history_folder_not_creatable_is_exit_1():
    blocker = write("a-file", "x")
    env = dict(ENV, XDG_DATA_HOME=os.path.join(blocker, "sub"))
    rc, out, err = run("recommend", "-q", SPEC, env=env)
    assert rc == 1 and "cannot create directory" in err and blocker in err, (rc, err)


def test_db_in_a_missing_folder_says_the_folder_is_missing():
    """--db DIR/history.db where DIR does not exist (config.json's "db" as
    docs/config.md shows it): exit 1, nothing made, and the hint says the
    folder is missing (it blamed permissions: "not writable by this user")."""
    folder = os.path.join(tmp(), "team")
    db = os.path.join(folder, "history.db")
    rc, out, err = recommend(db)
    assert rc == 1 and "cannot create database '%s'" % db in err, (rc, err)
    assert "folder '%s' does not exist" % folder in err and "mkdir -p" in err and "not writable" not in err, err
    assert not os.path.exists(folder)


def hold_lock(db, seconds, ready, release):
    """Holds the write lock of `db` (ready set once it does) until `release`
    is set, for at most `seconds`: the tests release it once they saw what
    they waited for, instead of waiting out a fixed time."""
    con = sqlite3.connect(db, isolation_level=None, timeout=0)
    con.execute("BEGIN EXCLUSIVE")
    con.execute("INSERT INTO specs VALUES ('lockholder', 'x', '{}', '2026')")
    ready.set()
    release.wait(seconds)
    con.execute("ROLLBACK")
    con.close()


def test_locked_database_bounded_wait_names_the_lock_and_no_out_file():
    db = fresh_db()
    ready, release = threading.Event(), threading.Event()
    t = threading.Thread(target=hold_lock, args=(db, 6, ready, release))
    t.start()
    ready.wait(5)
    out_file = os.path.join(tmp(), "r.json")
    started = time.time()
    rc, out, err = recommend(db, "--out-file", out_file, "-f", "json", env=dict(ENV, CLOUDFIT_DB_LOCK_TIMEOUT_S="1"))
    elapsed = time.time() - started
    # read commands meanwhile: no wait behind the writer
    started_read = time.time()
    rc_h, out_h, err_h = run("history", "--db", db, "-f", "json")
    read_s = time.time() - started_read
    release.set()
    t.join()
    assert rc == 1 and "locked" in err and "CLOUDFIT_DB_LOCK_TIMEOUT_S" in err, (rc, err)
    assert elapsed < 5, elapsed
    assert not os.path.exists(out_file), "an out-file without its history row"
    assert not [f for f in os.listdir(os.path.dirname(out_file)) if f.startswith(".")], "temporary file left"
    assert rc_h == 0 and len(json.loads(out_h)) == 1 and read_s < 5, (rc_h, err_h, read_s)
    db_ok(db)
    assert db_rows(db, "recommendations") == 1


def failing_insert(db, table):
    """The next insert into `table` fails inside the history transaction."""
    con = sqlite3.connect(db)
    con.execute("CREATE TRIGGER fail_%s BEFORE INSERT ON %s BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
                % (table, table))
    con.commit()
    con.close()


def test_side_files_appear_only_after_the_history_commit():
    """Issue 33 (5): --report, --plot, --emit (into a new --emit-dir) and
    --out-file are staged under temporary names and renamed only after the
    history row is committed: a failed commit (exit 1) leaves none of them,
    no temporary file and no folder made for them."""
    db = fresh_db()
    failing_insert(db, "recommendations")
    folder = tmp()
    emit_dir = os.path.join(folder, "launch", "specs")
    files = {"--report": os.path.join(folder, "r.html"), "--plot": os.path.join(folder, "p.svg"),
             "--out-file": os.path.join(folder, "out.md")}
    args = [a for kv in files.items() for a in kv]
    rc, out, err = recommend(db, *args, "-f", "markdown", "--emit", "skypilot", "--emit", "k8s", "--emit",
                             "torchrun", "--emit-dir", emit_dir)
    assert rc == 1 and "disk says no" in err, (rc, err)
    assert os.listdir(folder) == [], os.listdir(folder)
    assert db_rows(db, "recommendations") == 1
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER fail_recommendations")
    con.commit()
    con.close()
    rc, out, err = recommend(db, *args, "-f", "markdown", "--emit", "skypilot", "--emit-dir", emit_dir)
    assert rc == 0, err
    assert all(os.path.exists(p) for p in files.values()) and os.listdir(emit_dir) == ["resnet18-cifar10.sky.yaml"]
    assert "wrote skypilot launch spec to %s/resnet18-cifar10.sky.yaml" % emit_dir in run(
        "recommend", "--db", db, "--emit", "skypilot", "--emit-dir", emit_dir, SPEC)[2]


def staged_in(pid, folder):
    """How many outputs process `pid` has staged in `folder`: the files
    there (a hidden staging name) and the unnamed O_TMPFILE inodes it holds
    open there ('FOLDER/#123 (deleted)')."""
    folder = os.path.realpath(folder)
    names = set(os.path.join(folder, name) for name in os.listdir(folder))
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if target.startswith(folder + "/"):
            names.add(target)
    return len(names)


def test_a_writer_killed_before_publishing_leaves_nothing():
    """A writer SIGKILLed (or OOM-killed, or cut by a power loss) while its outputs are staged, here waiting
    for the history's write lock: nothing is left in the outputs' folder. Each was staged under a hidden name,
    `.NAME.cloudfit-XXXXXX`, that nothing ever removed; now it has no name until it is published."""
    import signal
    db = fresh_db()
    folder = tmp()
    ready, release = threading.Event(), threading.Event()
    t = threading.Thread(target=hold_lock, args=(db, 8, ready, release))
    t.start()
    ready.wait(5)
    p = subprocess.Popen([BIN, "recommend", "--db", db, "-q", "-f", "json", "-o", os.path.join(folder, "r.json"),
                          "--report", os.path.join(folder, "r.html"), "--plot", os.path.join(folder, "p.svg"),
                          "--emit", "skypilot", "--emit-dir", folder, SPEC],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(ENV, CLOUDFIT_DB_LOCK_TIMEOUT_S="30"))
    deadline = time.time() + 6
    while time.time() < deadline and staged_in(p.pid, folder) < 4:
        time.sleep(0.02)
    staged = staged_in(p.pid, folder)
    p.send_signal(signal.SIGKILL)
    p.wait()
    release.set()
    t.join()
    assert staged == 4, staged  # the four outputs staged, waiting for the lock
    assert os.listdir(folder) == [], os.listdir(folder)
    assert db_rows(db, "recommendations") == 1
    db_ok(db)


def test_profile_csv_appears_only_after_the_profile_is_stored():
    """Issue 33 (5): profile --csv likewise."""
    from fhelp import GOOD_PROBE, exec_spec
    db = tmp("p.db")
    spec = exec_spec("csvside", GOOD_PROBE)
    rc, out, err = run("profile", "--db", db, spec)
    assert rc == 0, err
    failing_insert(db, "profiles")
    folder = tmp()
    csv = os.path.join(folder, "m.csv")
    rc, out, err = run("profile", "--db", db, "--csv", csv, spec)
    assert rc == 1 and "disk says no" in err, (rc, err)
    assert os.listdir(folder) == [], os.listdir(folder)


MARKED_PROBE = r'''
import json, os
open(os.environ["CF_PROBE_MARK"], "a").write("ran\n")  # the (paid) probe ran
w, n = int(os.environ["CLOUDFIT_WARMUP_STEPS"]), int(os.environ["CLOUDFIT_STEPS"])
b = int(os.environ["CLOUDFIT_LOCAL_BATCH"])
print(json.dumps({"event": "device", "name": "NVIDIA A100-SXM4-40GB", "memory_gib": 40}), flush=True)
for i in range(w + n):
    print(json.dumps({"event": "step", "step": i + 1, "time_s": 0.01 + 0.001 * b,
                      "samples": b * int(os.environ["CLOUDFIT_MICRO_BATCHES"])}), flush=True)
print(json.dumps({"event": "done"}), flush=True)
'''


def test_outputs_and_history_checked_before_a_paid_run():
    """A profile --csv (or --db) that could not be written was found out after the whole sweep, and the
    measured profile was discarded; search --db likewise after its probes. Now both are checked first:
    exit 1 at once naming the path, no probe run."""
    from fhelp import exec_spec
    spec = exec_spec("preflight", MARKED_PROBE, batches=(8, 16))
    mark = tmp("mark")
    env = dict(ENV, CF_PROBE_MARK=mark)
    blocker = write("preflight-file", "x")
    missing_csv = os.path.join(tmp(), "no", "such", "dir", "m.csv")
    missing_out = os.path.join(tmp(), "no", "such", "dir", "p.json")
    # --out-file was no option of profile and search: ignored with a note
    # after the whole run (the check of its folder was dead code)
    cases = [(["--db", tmp("p.db"), "--csv", missing_csv], "cannot write '%s'" % missing_csv),
             (["--db", tmp("p.db"), "--out-file", missing_out], "cannot write '%s'" % missing_out),
             (["--db", os.path.join(blocker, "sub", "h.db")], "cannot create database '%s/sub/h.db'" % blocker)]
    for extra, said in cases:
        started = time.monotonic()
        rc, out, err = run("profile", *extra, spec, env=env)
        took = time.monotonic() - started
        assert rc == 1 and said in err and ("Not a directory" in err or "No such file" in err), (extra, rc, err)
        assert not os.path.exists(mark), (extra, open(mark).read())
        assert took < 5, (extra, took)  # no sweep: well under a second when the machine is idle
    rc, out, err = run("search", "--runner", "trace:" + example(os.path.join("data",
                       "resnet50-t4-profile.csv")), "--trace-model", "imagenet", "--gpu", "T4", "--cloud", "aws",
                       "--db", os.path.join(blocker, "sub", "h.db"), example("resnet50-imagenet.json"))
    assert rc == 1 and "cannot create database '%s/sub/h.db'" % blocker in err, (rc, err)
    assert "search:" not in err, err  # no run started
    rc, out, err = run("search", "--runner", "trace:" + example(os.path.join("data", "resnet50-t4-profile.csv")),
                       "--trace-model", "imagenet", "--gpu", "T4", "--cloud", "aws", "--no-history",
                       "--out-file", missing_out, example("resnet50-imagenet.json"))
    assert rc == 1 and "cannot write '%s'" % missing_out in err, (rc, err)
    assert "search:" not in err, err
    folder, db = db_for_a_read_only_folder()
    for extra in (["--db", tmp("p2.db"), "--csv", os.path.join(folder, "m.csv")], ["--db", db]):
        rc, out, err = in_mount_ns(read_only(folder), [BIN, "profile", *extra, spec], env=env)
        assert rc == 1 and folder in err and "Read-only file system" in err, (extra, rc, err)
        assert not os.path.exists(mark), (extra, open(mark).read())


# A writer that made the database and holds its write lock in the middle of
# its first transaction (rollback journal: it has not switched to WAL yet),
# until it is killed.
KILLED_WRITER = r'''
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("CREATE TABLE half (x)")
con.execute("BEGIN IMMEDIATE")
con.execute("INSERT INTO half VALUES (1)")
print("locked", flush=True)
time.sleep(600)
'''


def test_writer_killed_mid_transaction_never_fails_another_early():
    """Issue 33 (7): a writer SIGKILLed while it holds the write lock: the
    healthy writer waiting meanwhile (its switch to WAL is answered BUSY
    without SQLite's busy handler) retries on the clock and succeeds once
    the lock is gone, instead of failing at once "after 60 s"; a wait that
    does run out names the time it really waited."""
    db = tmp("killed.db")
    holder = subprocess.Popen([PY, "-c", KILLED_WRITER, db], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline() == "locked\n"
    p = subprocess.Popen([BIN, "recommend", "--db", db, "-q", SPEC], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(ENV, CLOUDFIT_DB_LOCK_TIMEOUT_S="60"), text=True)
    time.sleep(1)
    holder.kill()
    holder.wait()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, (p.returncode, err)
    assert db_rows(db, "recommendations") == 1
    db_ok(db)
    ready, release = threading.Event(), threading.Event()
    t = threading.Thread(target=hold_lock, args=(db, 3, ready, release))
    t.start()
    ready.wait(5)
    started = time.time()
    rc, out, err = recommend(db, env=dict(ENV, CLOUDFIT_DB_LOCK_TIMEOUT_S="1.5"))
    release.set()
    t.join()
    assert rc == 1 and "held its write lock for the 1.5 s this command waited" in err, (rc, err)
    assert time.time() - started >= 1.4


def test_sigint_while_waiting_for_a_lock_stops_at_once():
    import signal
    db = fresh_db()
    ready, release = threading.Event(), threading.Event()
    t = threading.Thread(target=hold_lock, args=(db, 8, ready, release))
    t.start()
    ready.wait(5)
    p = subprocess.Popen([BIN, "recommend", "--db", db, "-q", SPEC], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=ENV, start_new_session=True)
    time.sleep(1.5)
    started = time.time()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    elapsed = time.time() - started
    release.set()
    t.join()
    assert p.returncode == 130 and b"interrupted by SIGINT" in err, (p.returncode, err)
    assert elapsed < 3, elapsed
    assert db_rows(db, "recommendations") == 1
    db_ok(db)


def test_outputs_are_checked_before_anything_is_published():
    """What an output names is checked when it is staged, before the history row and the other outputs:
    a directory (or '.', or a trailing '/') failed only at the rename, after the row was stored and -o,
    --plot and --emit were published; two outputs naming one file lost one silently; a device or a link
    was replaced by a regular file (-o /dev/full "succeeded" and /dev/full became a file)."""
    folder = tmp()
    os.mkdir(os.path.join(folder, "adir"))
    db = os.path.join(folder, "h.db")
    spec = example("resnet50-imagenet.json")

    def rec(*args):
        return subprocess.run([BIN, "recommend", "-q", "--db", db, *args, spec], capture_output=True, text=True,
                              env=ENV, cwd=folder, timeout=120)
    for bad in ("adir", "adir/", ".", ""):
        p = rec("-o", "out.txt", "--plot", "p.svg", "--emit", "k8s", "--emit-dir", "new/sub", "--report", bad)
        if bad:
            assert p.returncode == 1 and "cannot write" in p.stderr, (bad, p.returncode, p.stderr)
        else:  # an empty value is a usage error, said before anything runs
            assert p.returncode == 2 and "expects a file name, got ''" in p.stderr, (p.returncode, p.stderr)
        assert [f for f in os.listdir(folder) if not f.startswith("h.db")] == ["adir"], (bad, os.listdir(folder))
        assert not os.path.exists(db) or db_rows(db, "recommendations") == 0
    # one new file under two spellings: a usage error before anything runs (it was found only at publishing)
    p = rec("-f", "json", "-o", "same.out", "--report", "./same.out")
    assert p.returncode == 2 and "name the same file" in p.stderr, p.stderr
    assert not os.path.exists(os.path.join(folder, "same.out"))
    # a link: its target is written, the link kept
    target = os.path.join(folder, "adir", "real.json")
    open(target, "w").close()
    os.symlink(target, os.path.join(folder, "link.json"))
    p = rec("-f", "json", "-o", "link.json")
    assert p.returncode == 0, p.stderr
    assert os.path.islink(os.path.join(folder, "link.json")) and json.load(open(target))["chosen"], p.stderr
    # a dangling link (relative, through a second link): its last target is created, as a shell's '>'
    # does; the links stay (the first link was replaced by a file)
    os.symlink("adir/second.json", os.path.join(folder, "dangling.json"))
    os.symlink("made.json", os.path.join(folder, "adir", "second.json"))
    p = rec("-f", "json", "-o", "dangling.json")
    assert p.returncode == 0, p.stderr
    assert os.path.islink(os.path.join(folder, "dangling.json")) and os.path.islink(os.path.join(folder, "adir", "second.json"))
    assert json.load(open(os.path.join(folder, "adir", "made.json")))["chosen"]
    # one whose target's folder is missing, or a loop of links: refused with the system's reason, nothing made
    os.symlink("nofolder/x.json", os.path.join(folder, "nowhere.json"))
    os.symlink("loop2", os.path.join(folder, "loop1"))
    os.symlink("loop1", os.path.join(folder, "loop2"))
    for name, why in (("nowhere.json", "No such file or directory"), ("loop1", "Too many levels of symbolic links")):
        p = rec("-f", "json", "-o", name)
        assert p.returncode == 1 and "cannot write '%s': %s" % (name, why) in p.stderr, p.stderr
        assert os.path.islink(os.path.join(folder, name))
    # a device is written through: /dev/full fails with its own error, before the history row
    rows = db_rows(db, "recommendations")
    p = rec("-o", "/dev/full")
    assert p.returncode == 1 and "No space left on device" in p.stderr, p.stderr
    assert db_rows(db, "recommendations") == rows and os.path.exists("/dev/full") and \
        stat.S_ISCHR(os.stat("/dev/full").st_mode)
    # and a FIFO (a shell's >(...)) gets the result
    fifo = os.path.join(folder, "pipe")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    p = rec("-f", "json", "-o", fifo)
    reader.join(60)
    assert p.returncode == 0 and json.loads(got[0])["chosen"], p.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def set_schema_version(db, version):
    """Sets the database's schema version; returns the one it had."""
    con = sqlite3.connect(db)
    was = con.execute("PRAGMA user_version").fetchone()[0]
    con.execute("PRAGMA user_version = %d" % version)
    con.commit()
    con.close()
    return was


def test_read_commands_never_write_or_migrate():
    db = fresh_db()
    current = set_schema_version(db, 6)  # an older schema (migration 7 not applied)
    before = open(db, "rb").read()
    rc, out, err = run("history", "--db", db)
    assert rc == 1 and "schema version 6" in err and "upgrade it once" in err, (rc, err)
    assert open(db, "rb").read() == before
    # a command that only consults it (cached profiles, snapshots) goes on without it, and says so once
    rc, out, err = run("recommend", "--no-history", "-q", "-f", "json", "--db", db,
                       example("mlp-synthetic.json"))
    assert rc == 0 and err.count("schema version 6") == 1 and "not used" in err, (rc, err)
    assert open(db, "rb").read() == before
    set_schema_version(db, current)
    os.chmod(db, 0o444)  # a read-only file (root ignores it, the folder test below does not)
    rc, out, err = run("history", "--db", db)
    assert rc == 0, err
    os.chmod(db, 0o644)


def test_migrate_only_reads_its_source():
    """`history migrate` opened its source for writing: a foreign SQLite file given as the source got
    cloudfit's tables (exit 0), an older history was upgraded in place, and another user's history
    could not be copied at all."""
    foreign = tmp("other.db")
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    before = open(foreign, "rb").read()
    rc, out, err = run("history", "--db", foreign, "migrate", "--to", tmp("copy.db"))
    assert rc == 3 and "holds no cloudfit history" in err and "hint:" in err, (rc, err)
    rc, out, err = run("history", "--db", foreign)  # every command: not a history is bad input (exit 3)
    assert rc == 3 and "holds no cloudfit history" in err, (rc, err)
    assert open(foreign, "rb").read() == before
    assert open(foreign, "rb").read() == before
    db = fresh_db()
    current = set_schema_version(db, 6)
    before = open(db, "rb").read()
    rc, out, err = run("history", "--db", db, "migrate", "--to", tmp("copy.db"))
    assert rc == 1 and "schema version 6" in err, (rc, err)
    assert open(db, "rb").read() == before
    set_schema_version(db, current)
    before = open(db, "rb").read()
    copy = tmp("copy.db")
    rc, out, err = run("history", "--db", db, "migrate", "--to", copy)
    assert rc == 0 and db_rows(copy, "recommendations") == 1, (rc, err)
    assert open(db, "rb").read() == before


def test_migrate_into_itself_under_another_name_is_refused():
    """`history migrate --to` the source file was refused only when spelled as --db spelled it: ./h.db, the
    absolute path or a symlink opened the file twice, "copied 0 recommendations (1 were there already)" and
    exited 0, as if a copy into another database had worked. The files are compared (device and inode)."""
    db = fresh_db()
    folder, name = os.path.split(db)
    link = os.path.join(folder, "link.db")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(name, link)
    before = open(db, "rb").read()
    for to in (name, "./" + name, db, "link.db", os.path.join(folder, ".", name)):
        rc, out, err = run("history", "--db", name, "migrate", "--to", to, cwd=folder)
        assert rc == 2 and out == "", (to, rc, out, err)
        assert "is both the source and the destination" in err and "copied" not in err, (to, err)
    assert open(db, "rb").read() == before
    # another file, and a file not there yet, are copies
    rc, out, err = run("history", "--db", name, "migrate", "--to", "other.db", cwd=folder)
    assert rc == 0 and "copied 1 recommendation (0 were there already), 1 spec," in out, (rc, out, err)

def test_migrate_again_uses_up_no_ids():
    """A second `history migrate` of the same rows used up an id per row it skipped (the insert its
    conflict clause skipped still took an AUTOINCREMENT id): the destination's next recommendation
    and measurement got ids past a gap of the history's size."""
    db = fresh_db()
    assert recommend(db)[0] == 0
    assert run("record", "1", "--step-time-s", "1", "--db", db)[0] == 0
    copy = tmp("again.db")
    for _ in range(3):
        rc, out, err = run("history", "--db", db, "migrate", "--to", copy)
        assert rc == 0, err
    assert "copied 0 recommendations (2 were there already)" in out and " 0 measurements" in out, out
    assert recommend(copy)[0] == 0
    assert run("record", "3", "--step-time-s", "1", "--db", copy)[0] == 0
    con = sqlite3.connect(copy)
    assert [r[0] for r in con.execute("SELECT id FROM recommendations ORDER BY id")] == [1, 2, 3]
    assert [r[0] for r in con.execute("SELECT id FROM measurements ORDER BY id")] == [1, 2]


def add_profile(db, key, created_at, note, backend="cpu", seq=0):
    con = sqlite3.connect(db)
    con.execute("INSERT INTO profiles(spec_key, backend, device, spec_name, created_at, is_gpu, b_noise,"
                " max_local_batch, profile_json, seq) VALUES (?, ?, 'EPYC', 'mlp', ?, 0, NULL, 64, ?, ?)",
                (key, backend, created_at, json.dumps({"note": note}), seq))
    con.commit()
    con.close()


def test_migrate_keeps_the_newer_profile():
    """history migrate kept the destination's cached profile of a (spec key, backend, device) however old
    (ON CONFLICT DO NOTHING) and said "0 profiles": recommend on the destination then used the stale one,
    though a newer profile of the same triple replaces the older one (docs/profiler.md)."""
    src = fresh_db()
    dst = tmp("profiles-dst.db")
    assert recommend(dst)[0] == 0
    add_profile(dst, "a", "2026-01-01T00:00:00Z", "team's, older")
    add_profile(dst, "b", "2026-03-01T00:00:00Z", "team's, newer")
    add_profile(src, "a", "2026-02-01T00:00:00Z", "laptop's, newer")
    add_profile(src, "b", "2026-02-01T00:00:00Z", "laptop's, older")
    add_profile(src, "c", "2026-02-01T00:00:00Z", "laptop's only")
    rc, out, err = run("history", "--db", src, "migrate", "--to", dst)
    assert rc == 0, err
    assert "2 profiles (1 replacing an older one; 1 not copied: older than the destination's)" in out, out
    con = sqlite3.connect(dst)
    kept = dict(con.execute("SELECT spec_key, created_at || ' ' || profile_json FROM profiles"))
    con.close()
    assert kept == {"a": '2026-02-01T00:00:00Z {"note": "laptop\'s, newer"}',
                    "b": '2026-03-01T00:00:00Z {"note": "team\'s, newer"}',
                    "c": '2026-02-01T00:00:00Z {"note": "laptop\'s only"}'}, kept
    rc, out, err = run("history", "--db", src, "migrate", "--to", dst)  # again: nothing new
    assert rc == 0 and " 0 profiles (1 not copied: older than the destination's)," in out, out



def test_migrate_keeps_the_order_profiles_of_one_second_were_stored_in():
    """Profiles of one created_at (whole seconds) are ordered by when they were stored (profiles.seq): copied in
    that order, each becomes the destination's newest of its second, so the source's order holds there."""
    src = fresh_db()
    dst = tmp("profiles-tie-dst.db")
    assert recommend(dst)[0] == 0
    add_profile(src, "t", "2026-02-01T00:00:00Z", "stored second", backend="cpu", seq=7)
    add_profile(src, "t", "2026-02-01T00:00:00Z", "stored first", backend="exec", seq=3)
    add_profile(dst, "t", "2026-02-01T00:00:00Z", "the team's, same second", backend="cuda", seq=5)
    rc, out, err = run("history", "--db", src, "migrate", "--to", dst)
    assert rc == 0, err
    con = sqlite3.connect(dst)
    order = [r[0] for r in con.execute("SELECT backend FROM profiles WHERE spec_key = 't' ORDER BY seq DESC")]
    con.close()
    assert order == ["cpu", "exec", "cuda"], order

def test_prune_refuses_a_file_without_a_history():
    """docs/history.md: a command that does not create a history (history prune, record) refuses a database
    without cloudfit's tables (exit 3) instead of creating them. `history prune` on a foreign SQLite file,
    or an empty one, gave it all of cloudfit's tables, made it private (mode 0600) and said "pruned 0
    recommendations", exit 0."""
    foreign = tmp("prune-foreign.db")
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    os.chmod(foreign, 0o644)
    empty = tmp("prune-empty.db")
    open(empty, "wb").close()
    for path in (foreign, empty):
        before = open(path, "rb").read()
        rc, out, err = run("history", "--db", path, "prune", "--older-than", "1d")
        # an empty file is no history yet (as a missing one), a foreign one is refused as such
        said = f"no history database at '{path}': the file is empty" if path == empty else \
            f"database '{path}' holds no cloudfit history"
        assert rc == 3 and said in err and "hint:" in err, (rc, err)
        assert out == "" and "pruned" not in err, out
        assert open(path, "rb").read() == before and not os.path.exists(path + "-wal"), path
    assert os.stat(foreign).st_mode & 0o777 == 0o644


def test_failed_record_writes_nothing():
    """A record that fails changes nothing: an empty or foreign SQLite file given by mistake got all of
    cloudfit's tables before "no recommendation 5" (exit 3), and a note longer than a note holds was cut
    at byte 255, inside a UTF-8 character."""
    empty = tmp("empty.db")
    open(empty, "wb").close()
    rc, out, err = run("record", "5", "--step-time-s", "1", "--db", empty)
    assert rc == 3 and f"no history database at '{empty}': the file is empty" in err, (rc, err)
    assert os.path.getsize(empty) == 0 and not os.path.exists(empty + "-wal"), os.listdir(os.path.dirname(empty))
    db = fresh_db()
    before = open(db, "rb").read()
    rc, out, err = run("record", "7", "--step-time-s", "1", "--db", db)
    assert rc == 3 and "no recommendation 7" in err, (rc, err)
    rc, out, err = run("record", "1", "--step-time-s", "1", "--note", "\u00fc" * 200, "--db", db)
    assert rc == 2 and "400 bytes" in err and "at most 255" in err, (rc, err)
    assert open(db, "rb").read() == before
    assert db_rows(db, "measurements") == 0
    # a note (any text option) that is not UTF-8: SQLite stored it raw, PostgreSQL refused the row
    rc, out, err = run("record", "1", "--step-time-s", "1", "--note", os.fsdecode(b"caf\xe9"), "--db", db)
    assert rc == 2 and "option '--note' is not valid UTF-8 (byte 4" in err, (rc, err)
    assert open(db, "rb").read() == before
    rc, out, err = run("record", "1", "--step-time-s", "1", "--note", "\u00fc" * 127, "--db", db)
    assert rc == 0, err
    note = sqlite3.connect(db).execute("SELECT note FROM measurements").fetchone()[0]
    assert note == "\u00fc" * 127, note


HOLD_OPEN = r'''
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1])
con.execute("BEGIN")
con.execute("SELECT count(*) FROM recommendations").fetchall()  # a reader in WAL mode: -wal and -shm exist
print("ready", flush=True)
sys.stdin.readline()
con.close()
'''


def as_user(uid, argv):
    return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", *argv]


def test_another_users_history_is_read_without_leaving_files():
    """Another user's history (mode 0644) in a folder everyone may write, like /tmp: a read command as
    this user lists it and leaves no -wal/-shm behind (SQLite made them, owned by the reader, and the
    owner's next write failed on them: "attempt to write a readonly database"), also while the owner
    has it open (the -shm there is used read-only)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        raise Skip("needs root and setpriv to act as two users")
    folder = tempfile.mkdtemp(prefix="cloudfit-shared-", dir="/tmp")  # the test's own TMP is 0700
    os.chmod(folder, 0o1777)
    try:
        check_another_users_history(folder)
    finally:
        shutil.rmtree(folder)


def check_another_users_history(folder):
    db = os.path.join(folder, "h.db")
    rc, out, err = recommend(db)
    assert rc == 0, err
    owner, reader = 1000, 65534
    os.chown(db, owner, owner)
    os.chmod(db, 0o644)
    listing = as_user(reader, [BIN, "history", "--db", db, "-f", "json"])
    p = subprocess.run(listing, capture_output=True, text=True, env=ENV, timeout=60)
    assert p.returncode == 0 and len(json.loads(p.stdout)) == 1, (p.returncode, p.stderr)
    assert sorted(os.listdir(folder)) == ["h.db"], os.listdir(folder)
    holder = subprocess.Popen(as_user(owner, [PY, "-c", HOLD_OPEN, db]), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert os.path.exists(db + "-shm")
        p = subprocess.run(listing, capture_output=True, text=True, env=ENV, timeout=60)
        assert p.returncode == 0 and len(json.loads(p.stdout)) == 1, (p.returncode, p.stderr)
    finally:
        holder.communicate("\n", timeout=60)
    assert all(os.stat(os.path.join(folder, f)).st_uid == owner for f in os.listdir(folder)), [
        (f, os.stat(os.path.join(folder, f)).st_uid) for f in os.listdir(folder)]
    # the reader may not write it, nor make files beside it: said as writing (it was "cannot read ...:
    # attempt to write a readonly database")
    os.chmod(folder, 0o755)
    p = subprocess.run(as_user(reader, [BIN, "record", "1", "--step-time-s", "1", "--db", db]),
                       capture_output=True, text=True, env=ENV, timeout=60)
    os.chmod(folder, 0o1777)
    assert p.returncode == 1 and "cannot write" in p.stderr and "cannot read" not in p.stderr, p.stderr
    p = subprocess.run(as_user(owner, [BIN, "record", "1", "--step-time-s", "1", "--db", db, "-q"]),
                       capture_output=True, text=True, env=ENV, timeout=60)
    assert p.returncode == 0, p.stderr


def test_launch_spec_another_user_owns_in_a_sticky_folder():
    """A launch spec to replace in a folder with the sticky bit (like /tmp), where another user wrote the last
    one: the rename at the publication failed with EPERM after the history commit, so the run was stored
    and exited 1, with the new SkyPilot task next to the old torchrun script. Now refused before anything
    is stored or published, naming the file."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        raise Skip("needs root and setpriv to act as two users")
    folder = tempfile.mkdtemp(prefix="cloudfit-shared-", dir="/tmp")  # the test's own TMP is 0700
    os.chmod(folder, 0o1777)
    home = tempfile.mkdtemp(prefix="cloudfit-home-", dir="/tmp")
    try:
        old = os.path.join(folder, "resnet18-cifar10.torchrun.sh")
        with open(old, "w") as f:
            f.write("old\n")
        os.chown(old, 1000, 1000)
        os.chown(home, 65534, 65534)
        db = os.path.join(home, "h.db")
        p = subprocess.run(as_user(65534, [BIN, "recommend", "-q", "--db", db, "--emit", "skypilot", "--emit",
                                           "torchrun", "--emit-dir", folder, SPEC]),
                           capture_output=True, text=True, env=dict(ENV, HOME=home), timeout=120)
        assert p.returncode == 1 and f"cannot write '{old}': Operation not permitted" in p.stderr \
            and "sticky bit" in p.stderr and "--emit torchrun" in p.stderr, (p.returncode, p.stderr)
        assert sorted(os.listdir(folder)) == ["resnet18-cifar10.torchrun.sh"], os.listdir(folder)
        assert open(old).read() == "old\n"
        assert not os.path.exists(db) or db_rows(db, "recommendations") == 0, os.listdir(home)
    finally:
        shutil.rmtree(folder)
        shutil.rmtree(home)


def read_only(folder):
    """The mount-namespace setup (in_mount_ns) that makes `folder` read-only, even for root."""
    return 'mount --bind "%s" "%s" && mount -o remount,bind,ro "%s"' % (folder, folder, folder)


def db_for_a_read_only_folder():
    """(folder, database with one recommendation); the test is skipped where
    no mount namespace can make a folder read-only for root."""
    if not have_unshare():
        raise Skip("no mount namespaces here (unshare -m): cannot make a folder read-only for root")
    folder = tmp()
    db = os.path.join(folder, "h.db")
    rc, out, err = recommend(db)
    assert rc == 0, err
    return folder, db


def test_read_only_folder():
    folder, db = db_for_a_read_only_folder()
    count = db_rows(db, "recommendations")
    setup = read_only(folder)
    rc, out, err = in_mount_ns(setup, [BIN, "history", "--db", db, "-f", "json"])
    assert rc == 0 and len(json.loads(out)) == count, (rc, err)
    rc, out, err = in_mount_ns(setup, [BIN, "prices", "--db", db, "T4"])
    assert rc == 0, (rc, err)
    rc, out, err = in_mount_ns(setup, [BIN, "recommend", "--db", db, "-q", SPEC])
    assert rc == 1 and "not writable" in err, (rc, err)
    # it says why: the file is there (it blamed a missing file: "No such file or directory")
    assert "read-only file system" in err and "No such file" not in err, err
    assert db_rows(db, "recommendations") == count
    db_ok(db)


WAL_LEFT_BEHIND = r'''
import os, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.execute("PRAGMA wal_autocheckpoint=0")
con.execute("UPDATE recommendations SET spec_name = 'only-in-the-wal'")
con.commit()
os._exit(0)  # no close: the commit stays in the -wal file, no checkpoint
'''


def test_read_only_folder_with_a_wal_but_no_shm():
    """Issue 33 (11): a database whose -wal holds a commit but whose -shm is
    gone, in a read-only folder: read commands see the commit (the files
    are read from a private copy, removed afterwards) instead of failing
    with "No such file or directory" or missing what is in the log."""
    folder, db = db_for_a_read_only_folder()
    subprocess.run([PY, "-c", WAL_LEFT_BEHIND, db], check=True)
    os.remove(db + "-shm")
    assert os.path.getsize(db + "-wal") > 0
    tmpdir = tmp()
    setup = read_only(folder)
    rc, out, err = in_mount_ns(setup, [BIN, "history", "--db", db, "-f", "json"], env=dict(ENV, TMPDIR=tmpdir))
    assert rc == 0 and json.loads(out)[0]["spec"]["name"] == "only-in-the-wal", (rc, err)
    assert os.listdir(tmpdir) == [], os.listdir(tmpdir)
    assert sorted(os.listdir(folder)) == ["h.db", "h.db-wal"]
    # a full TMPDIR: the real reason (a short write left a stale errno: "No such file or directory") and the
    # copy's path; a TMPDIR that is not there: the folder it tried
    tiny = tmp()
    rc, out, err = in_mount_ns(setup + ' && mount -t tmpfs -o size=8k tmpfs "%s"' % tiny,
                               [BIN, "history", "--db", db], env=dict(ENV, TMPDIR=tiny))
    assert rc == 1 and "No space left on device" in err and "No such file" not in err, (rc, err)
    assert "copying it to '%s/cloudfit-db-" % tiny in err and "(TMPDIR)" in err and "TMPDIR" in err, err
    assert os.listdir(tiny) == [], os.listdir(tiny)
    missing = os.path.join(tmp(), "gone")
    rc, out, err = in_mount_ns(setup, [BIN, "history", "--db", db], env=dict(ENV, TMPDIR=missing))
    assert rc == 1 and "in '%s' (TMPDIR)" % missing in err and "No such file or directory" in err, (rc, err)


def test_disk_full():
    if not have_unshare():
        raise Skip("no mount namespaces here (unshare -m): no small file system to fill")
    folder = tmp()
    db = os.path.join(folder, "h.db")
    out_file = os.path.join(folder, "out.json")
    # a 1 MiB file system; the database is made, then the disk filled
    setup = ('mount -t tmpfs -o size=1m tmpfs "%s" && "%s" recommend --db "%s" -q "%s" && '
             'cp "%s" /tmp/cf-before.db 2>/dev/null; dd if=/dev/zero of="%s/fill" bs=4k 2>/dev/null; '
             '"%s" recommend --db "%s" -q -n 200 --out-file "%s" -f json "%s"; echo "rc=$?" >&2; '
             'ls -a "%s" >&2; rm -f "%s/fill"; sqlite3 "%s" "PRAGMA integrity_check; SELECT count(*) FROM recommendations" >&2; true'
             % (folder, BIN, db, SPEC, db, folder, BIN, db, out_file, SPEC, folder, folder, db))
    rc, out, err = in_mount_ns(setup, ["true"])
    assert "rc=1" in err, err
    assert "No space left on device" in err, err
    assert "\nok\n1\n" in err, err  # integrity ok, the first row only
    assert "out.json" not in err and ".out.json.cloudfit-" not in err, err  # nothing half-written


def test_database_open_failing_for_want_of_descriptors_or_space_says_so():
    """Too many open files while the history was opened said "cannot read 'h.db'" with the hint that the file
    or its folder is not writable, and one descriptor short of the limit SQLite left an empty -wal behind; a
    full disk said "cannot read" for a command that writes. Now: the reason, its hint, no file made."""
    db = fresh_db()
    out = tmp("r.md")
    # LeakSanitizer's exit check opens /proc/PID/task: with no descriptor left it aborts the sanitizer build
    lsan_off = dict(ENV, ASAN_OPTIONS=":".join(filter(None, (ENV.get("ASAN_OPTIONS", ""), "detect_leaks=0"))))
    for limit in (5, 6, 7):
        p = subprocess.run([BIN, "recommend", "-q", "--db", db, "-o", out, SPEC], capture_output=True, text=True,
                           env=lsan_off, preexec_fn=lambda n=limit: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)))
        assert p.returncode == 1, (limit, p.returncode, p.stderr)
        assert "Too many open files" in p.stderr and "ulimit -n" in p.stderr, (limit, p.stderr)
        assert "not writable" not in p.stderr and "cannot read '%s'" % db not in p.stderr, (limit, p.stderr)
        beside = [f for f in os.listdir(os.path.dirname(db)) if f.startswith(os.path.basename(db))]
        assert beside == [os.path.basename(db)], (limit, beside)  # no -wal, -shm left
    assert db_rows(db, "recommendations") == 1
    if not have_unshare():
        raise Skip("the full disk: no mount namespaces here (unshare -m); the descriptor limits were checked")
    folder = tmp()
    setup = ('mount -t tmpfs -o size=1m tmpfs "%s" && "%s" recommend --db "%s/h.db" -q "%s" >/dev/null && '
             'dd if=/dev/zero of="%s/fill" bs=4k 2>/dev/null; true' % (folder, BIN, folder, SPEC, folder))
    rc, out, err = in_mount_ns(setup, [BIN, "recommend", "--db", folder + "/h.db", "-q", SPEC])
    assert rc == 1 and "No space left on device" in err and "the disk is full" in err, (rc, err)
    assert "cannot read" not in err and "not writable" not in err, err


def test_new_database_on_a_full_disk_is_not_left_half_made():
    """A new history on a full disk was left behind empty (0 bytes, or with -wal and -shm) or half upgraded
    (schema version 1 or 3 of 7), and later commands said it held no history or needed upgrading. Now the
    upgrade is one transaction and a database this command made and could not set up is removed."""
    if not have_unshare():
        raise Skip("no mount namespaces here (unshare -m): no small file system to fill")
    for free_kib in (0, 16, 64, 128):
        folder = tmp()
        db = os.path.join(folder, "new.db")
        setup = ('mount -t tmpfs -o size=1m tmpfs "%s" && dd if=/dev/zero of="%s/fill" bs=1k '
                 'count=$(( $(df -k --output=avail "%s" | tail -1) - %d )) 2>/dev/null; '
                 '"%s" recommend --db "%s" -q "%s"; echo "rc=$?" >&2; ls -a "%s" >&2; '
                 '[ -e "%s" ] && sqlite3 "%s" "SELECT \'version=\' || user_version FROM pragma_user_version" >&2; true'
                 % (folder, folder, folder, free_kib, BIN, db, SPEC, folder, db, db))
        rc, out, err = in_mount_ns(setup, ["true"])
        assert "rc=1" in err or "rc=0" in err, err
        if "rc=1" in err:
            # no database, or a whole one (its schema set up before the row could not be written)
            assert "new.db" not in err.split("rc=")[1] or "version=7" in err, (free_kib, err)
            assert "new.db-wal" not in err or "version=7" in err, (free_kib, err)


def test_migrate_to_a_new_database_on_a_full_disk_leaves_nothing():
    """history migrate --to NEW.db on a disk with room for the schema but not the copy failed (exit 1, "the
    database is as it was") and left NEW.db, -wal and -shm: an empty history that then read as a migration
    of nothing. A destination this command created is removed when the copy fails."""
    if not have_unshare():
        raise Skip("no mount namespaces here (unshare -m): no small file system to fill")
    src = tmp("src.db")
    for name in ("mlp-synthetic.json", "resnet50-imagenet.json", "resnet18-cifar10.json"):
        rc, out, err = run("recommend", "--db", src, "-q", example(name))
        assert rc == 0, err
    failed = 0
    for free_kib in (120, 200, 280):
        folder = tmp()
        setup = ('mount -t tmpfs -o size=4m tmpfs "%s" && cp "%s" "%s/h.db" && cd "%s" && dd if=/dev/zero of=fill '
                 'bs=1k count=$(( $(df -k --output=avail . | tail -1) - %d )) 2>/dev/null; '
                 '"%s" history --db h.db migrate --to copy.db; echo "rc=$?" >&2; rm -f fill; echo "left:" $(ls -A) >&2'
                 % (folder, src, folder, folder, free_kib, BIN))
        rc, out, err = in_mount_ns(setup, ["true"])
        if "rc=0" in err:
            continue
        failed += 1
        assert "rc=1" in err and "full" in err, (free_kib, err)
        assert "left: h.db\n" in err, (free_kib, err)  # neither copy.db nor its -wal, -shm
    assert failed, "no free space tried made the copy fail"


def test_corrupted_and_truncated_database():
    garbage = write("garbage.db", b"this is not a database at all\n" * 200)
    before = open(garbage, "rb").read()
    rc, out, err = recommend(garbage)
    assert rc == 1 and "is damaged" in err and "never recreates" in err and garbage in err, (rc, err)
    assert open(garbage, "rb").read() == before
    rc, out, err = run("history", "--db", garbage)
    assert rc == 1 and "is damaged" in err, (rc, err)
    # a real database cut in half (a crash mid-copy, a full disk)
    db = fresh_db()
    for _ in range(3):
        assert recommend(db, "-n", "200")[0] == 0
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = os.path.getsize(db)
    cut = tmp("cut.db")
    with open(db, "rb") as f, open(cut, "wb") as g:
        g.write(f.read(size // 2))
    before = open(cut, "rb").read()
    rc, out, err = run("history", "--db", cut)
    assert rc == 1 and "is damaged" in err and ("truncated" in err or "malformed" in err), (rc, err)
    assert ".recover" in err, err
    rc, out, err = recommend(cut)
    assert rc == 1 and "is damaged" in err and ("truncated" in err or "malformed" in err), (rc, err)
    assert open(cut, "rb").read() == before


def test_permissions_whatever_the_umask():
    home = tmp()
    env = dict(ENV, XDG_DATA_HOME=os.path.join(home, "xdg"))
    out_new = os.path.join(home, "new.json")
    out_old = os.path.join(home, "old.json")
    with open(out_old, "w") as f:
        f.write("{}")
    os.chmod(out_old, 0o644)
    for umask in (0o022, 0o000):
        p = subprocess.run([BIN, "recommend", "-q", "-f", "json", "--out-file", out_new, SPEC], env=env,
                           capture_output=True, preexec_fn=lambda m=umask: os.umask(m))
        assert p.returncode == 0, p.stderr
    folder = os.path.join(home, "xdg", "cloudfit")
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, oct(os.stat(folder).st_mode)
    for name in os.listdir(folder):  # history.db and its -wal/-shm
        assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600, name
    assert stat.S_IMODE(os.stat(out_new).st_mode) == 0o600
    p = subprocess.run([BIN, "recommend", "-q", "-f", "json", "--out-file", out_old, SPEC], env=env,
                       capture_output=True)
    assert p.returncode == 0 and stat.S_IMODE(os.stat(out_old).st_mode) == 0o644  # an existing file keeps its mode


def test_existing_database_and_folder_open_to_others_are_made_private():
    """Issue 33 (11): a history.db of 0644 in a 0755 folder (as earlier
    versions made them) is made 0600 in 0700 by the next command that
    writes, with a warning; a --db folder is the user's and is left alone."""
    home = tmp()
    folder = os.path.join(home, "xdg", "cloudfit")
    env = dict(ENV, XDG_DATA_HOME=os.path.join(home, "xdg"))
    p = subprocess.run([BIN, "recommend", "-q", SPEC], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    os.chmod(folder, 0o755)
    os.chmod(os.path.join(folder, "history.db"), 0o644)
    p = subprocess.run([BIN, "history"], env=env, capture_output=True, text=True)
    assert p.returncode == 0 and "private" not in p.stderr, p.stderr  # reading changes nothing
    p = subprocess.run([BIN, "recommend", "-q", SPEC], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.join(folder, "history.db")).st_mode) == 0o600
    assert "made '%s' private: mode 0700, was 0755" % folder in p.stderr, p.stderr
    assert "made '%s/history.db' private: mode 0600, was 0644" % folder in p.stderr, p.stderr
    own = tmp()
    os.chmod(own, 0o755)
    db = os.path.join(own, "team.db")
    rc, out, err = recommend(db)
    os.chmod(db, 0o640)
    rc, out, err = recommend(db)
    assert rc == 0 and stat.S_IMODE(os.stat(db).st_mode) == 0o600 and stat.S_IMODE(os.stat(own).st_mode) == 0o755


def test_only_regular_files_are_read():
    fifo = tmp("fifo.json")
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo, tmp()):
        started = time.time()
        rc, out, err = run("recommend", "--no-history", path, timeout=30)
        assert rc == 3 and ("not a regular file" in err or "Is a directory" in err), (path, rc, err)
        assert time.time() - started < 10
    rc, out, err = run("validate", "/dev/zero", timeout=30)
    assert rc == 3 and "a character device, not a regular file" in err, (rc, err)


def test_large_inputs_hit_a_clear_limit_with_bounded_memory():
    header = "model,gpu,hw_gpus_per_node,num_nodes,num_gpus,local_bsz,step_time_s\n"
    big = tmp("million.csv")
    with open(big, "w") as f:
        f.write(header)
        row = "resnet50,T4,4,1,1,32,0.25\n"
        f.write(row * 1000000)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.time()
    rc, out, err = run("validate", big, timeout=120)
    elapsed = time.time() - started
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert rc == 3 and "too large" in err and "200000 rows" in err and big in err, (rc, err)
    assert "%s:200002:" % big in err, err  # the first row over the limit (the header is line 1)
    assert elapsed < 30, elapsed
    assert rss_mib < 600 or rss_mib <= before / 1024, rss_mib
    # a 70 MB file: over the input limit, refused before it is read
    huge = tmp("huge.json")
    with open(huge, "w") as f:
        f.write('{"name": "' + "x" * (70 << 20) + '"}')
    rc, out, err = run("recommend", "--no-history", huge)
    assert rc == 3 and "over the 64 MiB limit" in err and "CLOUDFIT_MAX_INPUT_MIB" in err, (rc, err)
    # a 10 MB string inside the limit: a clear message naming the key, quickly
    ten = write("ten.json", json.dumps({"name": "x" * (10 << 20), "model": {"parameters": 1000}}))
    started = time.time()
    rc, out, err = run("recommend", "--no-history", ten)
    assert rc == 3 and ": name:" in err and len(err) < 4000, (rc, err[:500])
    assert time.time() - started < 20


def test_spec_values_bounded_before_allocation():
    spec = spec_file("bounds", model={"parameters": 1000000, "architecture": {"type": "mlp", "layers": [32, 64, 10]}},
                     data={"samples": 2147483647, "source": "synthetic"},
                     training={"epochs": 1, "batch": 32, "lr": 0.1},
                     profile={"local_batches": [4, 2147483647]})
    rc, out, err = run("profile", "--db", tmp("b.db"), "--backend", "cpu", spec, timeout=60)
    assert rc == 3 and "profile.local_batches[1]: expected a positive integer up to 1048576" in err, (rc, err)
    spec = spec_file("bounds2", model={"parameters": 1000000, "architecture": {"type": "mlp", "layers": [32, 64, 10]}},
                     data={"samples": 2147483647, "source": "synthetic"},
                     training={"epochs": 1, "batch": 32, "lr": 0.1}, profile={"local_batches": [4, 8]})
    started = time.time()
    rc, out, err = run("profile", "--db", tmp("b.db"), "--backend", "cpu", spec, timeout=60)
    assert rc == 3 and "data.samples" in err and "at most 67108864" in err and spec in err, (rc, err)
    assert time.time() - started < 10


if __name__ == "__main__":
    main(dict(globals()))
