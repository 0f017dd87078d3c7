#!/usr/bin/python3
"""End-to-end tests of `cloudfit history` (list, filters, show, diff,
prune, formats), CI metadata, `cloudfit record` feeding later
recommendations, and bound SQL parameters against hostile names.
Usage: test_history.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import io
import json
import os
import re
import subprocess
import sys

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cfhelp import (BIN, ENV, PG, SRC, Skip, add_copies, check_db, clean_env, example, main, new_db, query,  # noqa: E402
                    run, spec_variant, sqlite_only, tmp)

SCHEMA = json.load(open(os.path.join(SRC, "data", "schema", "recommendation.schema.json")))
FAST = ["--cloud", "gcp"]  # a smaller search keeps the suite fast


def recommend(db, spec, *args, env=None):
    rc, out, err = run("recommend", "--db", db, *FAST, "-f", "json", *args, spec, env=env)
    assert rc == 0, (rc, err)
    return json.loads(out)


def last_id(db):
    return query(db, "SELECT max(id) FROM recommendations")[0][0]


def test_overrides_store_the_effective_spec():
    """recommend --deadline-hours 50 on a spec that says 24: the history row,
    its stored spec, its hash and its constraints all say 50 (issue 12)."""
    db = new_db("effective")
    spec = example("resnet50-imagenet.json")
    assert json.load(open(spec))["search"]["deadline_hours"] == 24
    plain = recommend(db, spec)
    doc = recommend(db, spec, "--deadline-hours", "50")
    assert doc["constraints"]["deadline_hours"] == 50, doc["constraints"]
    # Both runs override the search (FAST: --cloud gcp), so neither hash is
    # the file's; both come from the same file.
    assert doc["spec"]["hash"] != plain["spec"]["hash"]
    assert doc["spec"]["source_hash"] == plain["spec"]["source_hash"]
    assert doc["spec"]["source_hash"] not in (doc["spec"]["hash"], plain["spec"]["hash"])
    rid = last_id(db)
    (spec_hash, source_hash, result), = query(db, "SELECT spec_hash, source_hash, result_json FROM recommendations"
                                              " WHERE id = ?", rid)
    assert spec_hash == doc["spec"]["hash"] and source_hash == doc["spec"]["source_hash"]
    assert json.loads(result)["constraints"]["deadline_hours"] == 50
    (stored_json,), = query(db, "SELECT json FROM specs WHERE hash = ?", spec_hash)
    stored = json.loads(stored_json)
    assert stored["search"]["deadline_hours"] == 50 and stored["name"] == "resnet50-imagenet", stored["search"]
    # The stored spec is the one that was hashed: rehashing it gives the row's key.
    import hashlib
    assert hashlib.sha256(stored_json.encode()).hexdigest() == spec_hash
    (plain_json,), = query(db, "SELECT json FROM specs WHERE hash = ?", plain["spec"]["hash"])
    assert json.loads(plain_json)["search"]["deadline_hours"] == 24 and json.loads(plain_json)["search"]["clouds"] == ["gcp"]


def test_schema_v2_tables_and_alternatives_stored():
    db = new_db("schema")
    doc = recommend(db, example("resnet18-cifar10.json"), "-n", "7")
    if PG:
        assert query(db, "SELECT version FROM cloudfit_schema")[0][0] >= 2
        tables = {r[0] for r in query(db, "SELECT table_name FROM information_schema.tables "
                                          "WHERE table_schema = 'public'")}
    else:
        assert query(db, "PRAGMA user_version")[0][0] >= 2
        tables = {r[0] for r in query(db, "SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"specs", "recommendations", "alternatives", "ci_runs", "gate_results", "measurements"} <= tables, tables
    alts = query(db, "SELECT rank, instance_type, total_usd FROM alternatives WHERE recommendation_id = ? ORDER BY rank",
                 last_id(db))
    assert [a[0] for a in alts] == list(range(2, 2 + len(doc["alternatives"]))), alts
    assert [a[1] for a in alts] == [a["instance_type"] for a in doc["alternatives"]]
    # Not in CI: no ci_runs row, and metadata.ci is null.
    assert doc["metadata"]["ci"] is None
    assert query(db, "SELECT count(*) FROM ci_runs")[0][0] == 0


def test_ci_metadata_github_actions():
    db = new_db("ci-gh")
    env = clean_env(GITHUB_ACTIONS="true", GITHUB_SHA="0123456789abcdef0123456789abcdef01234567",
                    GITHUB_REF="refs/pull/42/merge", GITHUB_HEAD_REF="feature/faster", GITHUB_BASE_REF="main",
                    GITHUB_RUN_ID="987654", GITHUB_SERVER_URL="https://github.com", GITHUB_REPOSITORY="acme/train")
    doc = recommend(db, example("resnet18-cifar10.json"), env=env)
    jsonschema.validate(doc, SCHEMA)
    ci = doc["metadata"]["ci"]
    assert ci == {"provider": "github-actions", "commit": "0123456789abcdef0123456789abcdef01234567",
                  "branch": "feature/faster", "base_branch": "main", "pull_request": "42", "run": "987654",
                  "run_url": "https://github.com/acme/train/actions/runs/987654"}, ci
    row = query(db, "SELECT provider, branch, base_branch, pull_request FROM ci_runs")
    assert row == [("github-actions", "feature/faster", "main", "42")], row


def test_ci_metadata_other_providers():
    cases = [
        (dict(GITLAB_CI="true", CI_COMMIT_SHA="c0ffee", CI_MERGE_REQUEST_SOURCE_BRANCH_NAME="mr-branch",
              CI_MERGE_REQUEST_TARGET_BRANCH_NAME="develop", CI_MERGE_REQUEST_IID="7", CI_PIPELINE_ID="55",
              CI_PIPELINE_URL="https://gitlab.example/p/55"),
         ("gitlab-ci", "c0ffee", "mr-branch", "develop", "7", "55")),
        (dict(JENKINS_URL="https://jenkins.example/", GIT_COMMIT="abc", BRANCH_NAME="PR-3", CHANGE_BRANCH="fix",
              CHANGE_TARGET="main", CHANGE_ID="3", BUILD_NUMBER="12"),
         ("jenkins", "abc", "fix", "main", "3", "12")),
        # a freestyle job: GIT_BRANCH names the remote's ref
        (dict(JENKINS_URL="https://jenkins.example/", GIT_COMMIT="abd", GIT_BRANCH="origin/main", BUILD_NUMBER="13"),
         ("jenkins", "abd", "main", None, None, "13")),
        (dict(BUILDKITE="true", BUILDKITE_COMMIT="def", BUILDKITE_BRANCH="bk", BUILDKITE_PULL_REQUEST="false",
              BUILDKITE_PIPELINE_DEFAULT_BRANCH="main", BUILDKITE_BUILD_NUMBER="9"),
         ("buildkite", "def", "bk", "main", None, "9")),
        # a branch build with a pull request open from the branch: still the branch's own run (CircleCI sets
        # CIRCLE_PULL_REQUEST on push builds too: a base branch with one open was never its own baseline)
        (dict(CIRCLECI="true", CIRCLE_SHA1="fed", CIRCLE_BRANCH="cc",
              CIRCLE_PULL_REQUEST="https://github.com/o/r/pull/77", CIRCLE_BUILD_NUM="31"),
         ("circleci", "fed", "cc", None, None, "31")),
        (dict(CIRCLECI="true", CIRCLE_SHA1="fee", CIRCLE_BRANCH="pull/78", CIRCLE_PR_NUMBER="78",
              CIRCLE_BUILD_NUM="32"),
         ("circleci", "fee", "pull/78", None, "78", "32")),
        (dict(CI="true", CLOUDFIT_CI_BRANCH="generic", CLOUDFIT_CI_COMMIT="123"),
         ("ci", "123", "generic", None, None, None)),
    ]
    for env_vars, want in cases:
        rc, out, err = run("recommend", "--no-history", *FAST, "-f", "json", example("resnet18-cifar10.json"),
                           env=clean_env(**env_vars))
        assert rc == 0, err
        ci = json.loads(out)["metadata"]["ci"]
        got = (ci["provider"], ci["commit"], ci["branch"], ci["base_branch"], ci["pull_request"], ci["run"])
        assert got == want, (env_vars, got)
        assert "\x1b[" not in out + err


def test_ci_metadata_same_in_history_json():
    """What the CI did not give (commit, base branch, pull request, run, run URL) was null in recommend's
    metadata.ci but "" in `history -f json` and `history show -f json`: a consumer telling a branch run from a
    pull request's by `pull_request is None` got opposite answers. Both now write the same object."""
    db = new_db("ci-null")
    doc = recommend(db, example("resnet18-cifar10.json"), env=clean_env(CI="true", CLOUDFIT_CI_BRANCH="main"))
    want = doc["metadata"]["ci"]
    assert want["branch"] == "main" and want["pull_request"] is None and want["run_url"] is None, want
    rc, out, err = run("history", "--db", db, "-f", "json")
    assert rc == 0 and json.loads(out)[0]["ci"] == want, (out, err)
    rc, out, err = run("history", "--db", db, "show", "1", "-f", "json")
    assert rc == 0 and json.loads(out)["ci"] == want, (out, err)
    # a full GitHub pull request's metadata reads back whole
    env = clean_env(GITHUB_ACTIONS="true", GITHUB_SHA="0" * 40, GITHUB_REF="refs/pull/7/merge",
                    GITHUB_HEAD_REF="fix", GITHUB_BASE_REF="main", GITHUB_RUN_ID="5",
                    GITHUB_SERVER_URL="https://github.com", GITHUB_REPOSITORY="acme/train")
    want = recommend(db, example("resnet18-cifar10.json"), env=env)["metadata"]["ci"]
    rc, out, err = run("history", "--db", db, "-f", "json", "--limit", "1")
    assert rc == 0 and json.loads(out)[0]["ci"] == want and want["pull_request"] == "7", (out, err)
    # outside CI: null, as before
    recommend(db, example("resnet18-cifar10.json"), env=clean_env())
    rc, out, err = run("history", "--db", db, "-f", "json", "--limit", "1")
    assert json.loads(out)[0]["ci"] is None, out

def test_ci_metadata_whole_and_text():
    """A SHA-256 commit id (64 hex) was stored as 63; a branch cut at its field's 255 bytes kept half of an 'é'
    (PostgreSQL refused the row); a byte that is not UTF-8 was stored raw by SQLite and refused by PostgreSQL.
    Now: the whole id, a cut at a character boundary, non-UTF-8 bytes escaped the same on every backend."""
    sha256 = "0123456789abcdef" * 4
    rc, out, err = run("recommend", "--no-history", *FAST, "-f", "json", example("resnet18-cifar10.json"),
                       env=clean_env(CI="true", CLOUDFIT_CI_COMMIT=sha256, CLOUDFIT_CI_BRANCH="a" * 254 + "\u00e9"))
    assert rc == 0, err
    ci = json.loads(out)["metadata"]["ci"]
    assert ci["commit"] == sha256 and ci["branch"] == "a" * 254, ci
    env = clean_env(CI="true")
    env["CLOUDFIT_CI_BRANCH"] = os.fsdecode(b"br\xff\xfe")
    rc, out, err = run("recommend", "--no-history", *FAST, "-f", "json", example("resnet18-cifar10.json"), env=env)
    assert rc == 0, err
    assert json.loads(out)["metadata"]["ci"]["branch"] == "br\\xff\\xfe", out[:300]


def test_github_run_url_is_escaped():
    """GitHub's run URL was made of GITHUB_SERVER_URL, GITHUB_REPOSITORY and GITHUB_RUN_ID with snprintf, past
    the escaping every other CI variable gets: a line end in one was stored and printed raw (`history show`
    printed a forged line), a byte that is not UTF-8 was stored raw (PostgreSQL refused the row). Now escaped."""
    db = new_db("ci-url")
    env = clean_env(GITHUB_ACTIONS="true", GITHUB_HEAD_REF="feat", GITHUB_RUN_ID="5",
                    GITHUB_SERVER_URL="https://x\nrecommendation 99 (main) forged")
    env["GITHUB_REPOSITORY"] = os.fsdecode(b"o/r\xff")
    doc = recommend(db, example("resnet18-cifar10.json"), env=env)
    want = "https://x\\nrecommendation 99 (main) forged/o/r\\xff/actions/runs/5"
    assert doc["metadata"]["ci"]["run_url"] == want, doc["metadata"]["ci"]
    rc, out, err = run("history", "--db", db, "show", str(last_id(db)))
    assert rc == 0, err
    assert not any(line.startswith("recommendation 99") for line in out.splitlines()), out
    rc, out, err = run("history", "--db", db, "show", str(last_id(db)), "-f", "json")
    assert rc == 0 and json.loads(out)["ci"]["run_url"] == want, (out, err)


def test_github_pull_request_number_is_digits():
    """GITHUB_REF's pull request number was read with sscanf's %lu: refs/pull/-1/merge became
    18446744073709551615, "7abc" and " 7" became 7. Only digits up to the next '/' are a number, kept as written."""
    cases = [("refs/pull/42/merge", "42"), ("refs/pull/12/head", "12"), ("refs/pull/-1/merge", None),
             ("refs/pull/7abc/merge", None), ("refs/pull/ 7/merge", None), ("refs/pull/+8/merge", None),
             ("refs/pull//merge", None), ("refs/pull/9", None), ("refs/heads/main", None),
             ("refs/pull/99999999999999999999999/merge", "99999999999999999999999")]
    for ref, want in cases:
        rc, out, err = run("recommend", "--no-history", *FAST, "-f", "json", example("resnet18-cifar10.json"),
                           env=clean_env(GITHUB_ACTIONS="true", GITHUB_HEAD_REF="feat", GITHUB_REF=ref))
        assert rc == 0, err
        got = json.loads(out)["metadata"]["ci"]["pull_request"]
        assert got == want, (ref, got)


def test_baseline_dated_after_the_run_is_passed_over():
    """A run from a runner whose clock was ahead (2030) was the newest-dated, so it shadowed the base branch's
    later runs until the clocks got there: a pull request's gate failed against it (+576 %) with nothing saying
    why. Now a run dated after this one is taken only when there is no other (as a price snapshot fetched in
    the future is), and the baseline's name says which run was passed over, or that the baseline itself is
    dated after this run."""
    db = new_db("clock_ahead")
    spec = example("resnet18-cifar10.json")

    def baseline_note(epoch=None):
        env = clean_env(CI="true", CLOUDFIT_CI_BRANCH="feat", **({"SOURCE_DATE_EPOCH": epoch} if epoch else {}))
        rc, out, err = run("recommend", "--db", db, *FAST, "--base-branch", "main", "--max-cost-increase", "1000%",
                           "-f", "json", spec, env=env)
        assert rc == 0, err
        notes = [g["note"] for g in json.loads(out)["gates"] if g["name"].startswith("max_cost_increase")]
        assert len(notes) == 1, out
        return notes[0]

    recommend(db, spec, env=clean_env(CI="true", CLOUDFIT_CI_BRANCH="main", SOURCE_DATE_EPOCH="1900000000"))
    ahead = last_id(db)
    # the only run is dated after this one: it is the baseline, and says so
    note = baseline_note()
    assert "recommendation %d (main, 2030-03-17T17:46:40Z; dated after this run, " % ahead in note, note
    assert ": a clock was ahead)" in note, note
    # a run dated before this one is the baseline; the one from the future is named as passed over
    recommend(db, spec, env=clean_env(CI="true", CLOUDFIT_CI_BRANCH="main", SOURCE_DATE_EPOCH="1700000000"))
    before = last_id(db)
    note = baseline_note()
    assert "recommendation %d (main, 2023-11-14T22:13:20Z; recommendation %d, dated 2030-03-17T17:46:40Z after " \
           "this run (" % (before, ahead) in note, note
    assert ": a clock was ahead), passed over)" in note, note
    # once the clocks get there, the 2030 run is the newest and nothing is said
    note = baseline_note("1950000000")
    assert "recommendation %d (main, 2030-03-17T17:46:40Z)" % ahead in note, note
    assert "clock" not in note and "passed over" not in note, note


def fill(db):
    """Three specs × a few runs, on two branches."""
    a = example("resnet18-cifar10.json")
    b = spec_variant("other", name="other-model")
    for spec, branch in ((a, "main"), (a, "main"), (b, "main"), (a, "feature"), (b, "feature")):
        recommend(db, spec, env=clean_env(CI="true", CLOUDFIT_CI_BRANCH=branch))


def test_list_filters_limit_and_formats():
    db = new_db("list")
    fill(db)
    rc, out, err = run("history", "--db", db)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["ID", "CREATED", "SPEC"], lines[0]
    assert len(lines) == 1 + 5, out
    rc, out, err = run("history", "--db", db, "-f", "json")
    rows = json.loads(out)
    assert [r["id"] for r in rows] == [5, 4, 3, 2, 1], rows  # newest first (same timestamp: by id)
    rc, out, err = run("history", "--db", db, "-f", "json", "--model", "other-model")
    assert {r["spec"]["name"] for r in json.loads(out)} == {"other-model"} and len(json.loads(out)) == 2
    rc, out, err = run("history", "--db", db, "-f", "json", "--branch", "feature")
    assert sorted(r["id"] for r in json.loads(out)) == [4, 5], out
    h = rows[-1]["spec"]["hash"]
    rc, out, err = run("history", "--db", db, "-f", "json", "--spec-hash", h[:10])
    assert {r["spec"]["hash"] for r in json.loads(out)} == {h} and len(json.loads(out)) == 3
    # a prefix in upper case (as some tools print hashes) is the same prefix; a non-hex one is refused
    rc, out, err = run("history", "--db", db, "-f", "json", "--spec-hash", h[:10].upper())
    assert rc == 0 and {r["spec"]["hash"] for r in json.loads(out)} == {h} and len(json.loads(out)) == 3, (rc, out, err)
    for bad in ("sha256:" + h[:8], h[:8] + " ", h + "0"):
        rc, out, err = run("history", "--db", db, "-f", "json", "--spec-hash", bad)
        assert rc == 2 and out == "" and "option '--spec-hash' expects" in err and "hexadecimal" in err, (bad, rc, err)
    rc, out, err = run("history", "--db", db, "-f", "json", "--limit", "2")
    assert len(json.loads(out)) == 2
    rc, out, err = run("history", "--db", db, "-f", "json", "--cloud", "GCP", "--gpu", rows[0]["chosen"]["gpu"].lower())
    assert len(json.loads(out)) >= 1 and all(r["chosen"]["cloud"] == "gcp" for r in json.loads(out))
    rc, out, err = run("history", "--db", db, "-f", "json", "--cloud", "aws")
    assert json.loads(out) == []
    # A value given twice, or in another case, is the same filter: each row once, and the copies take no
    # --limit slot (every row was listed twice).
    gpu = rows[0]["chosen"]["gpu"]
    rc, one, err = run("history", "--db", db, "-f", "json", "--gpu", gpu)
    rc, twice, err = run("history", "--db", db, "-f", "json", "--gpu", gpu, "--gpu", gpu.lower(),
                         "--cloud", "gcp", "--cloud", "GCP")
    assert rc == 0 and [r["id"] for r in json.loads(twice)] == [r["id"] for r in json.loads(one)], (one, twice)
    rc, out, err = run("history", "--db", db, "-f", "json", "--gpu", gpu, "--gpu", gpu, "--limit", "2")
    assert [r["id"] for r in json.loads(out)] == [r["id"] for r in json.loads(one)][:2], out
    rc, out, err = run("history", "--db", db, "-f", "json", "--since", "2026-11-01", "--until", "2026-11-30")
    assert len(json.loads(out)) == 5, out  # SOURCE_DATE_EPOCH 1795000000 = 2026-11-18
    rc, out, err = run("history", "--db", db, "-f", "json", "--since", "2026-11-19")
    assert json.loads(out) == []
    rc, out, err = run("history", "--db", db, "-f", "csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert len(table) == 5 and table[0]["id"] == "5" and table[0]["branch"] == "feature", table[0]
    assert abs(float(table[0]["total_usd"]) / rows[0]["chosen"]["total_usd"] - 1) < 1e-12


def test_gpu_filter_takes_what_recommend_takes():
    """history --gpu read the word as the stored text: 'Tesla T4', which recommend --gpu takes (and stores
    as T4), listed nothing. It reads a GPU as every GPU filter does (cf_catalog_gpu_filter_model), and a
    word that worked before (a model in any case; a family word, compared as written) lists what it did."""
    db = new_db("gpuspell")
    recommend(db, example("resnet18-cifar10.json"), "--gpu", "Tesla T4")
    recommend(db, example("resnet18-cifar10.json"), "--gpu", "L4")
    ids = {r[1]: r[0] for r in query(db, "SELECT id, gpu FROM recommendations")}
    assert set(ids) == {"T4", "L4"}, ids

    def listed(*gpus):
        args = [a for g in gpus for a in ("--gpu", g)]
        rc, out, err = run("history", "--db", db, "-f", "json", *args)
        assert rc == 0, (gpus, rc, err)
        return sorted(r["id"] for r in json.loads(out))
    for spelling in ("T4", "t4", "Tesla T4", "NVIDIA Tesla T4", "nvidia t4", "NVIDIA-T4"):
        assert listed(spelling) == [ids["T4"]], spelling
    assert listed("Tesla T4", "NVIDIA L4") == sorted(ids.values())
    rc, csv_out, err = run("history", "--db", db, "-f", "csv", "--gpu", "Tesla T4")
    assert rc == 0 and len(list(csv.DictReader(io.StringIO(csv_out)))) == 1, (rc, csv_out, err)
    rc, table, err = run("history", "--db", db, "--gpu", "Tesla T4")
    assert rc == 0 and "T4" in table and "L4" not in table, (rc, table, err)
    # a family word names no one model: compared as written, as before (a row stored as 'A100' by hand)
    assert listed("a100") == [] and listed("NVIDIA A100") == [] and listed("H100-SXM") == []
    query(db, "UPDATE recommendations SET gpu = 'A100' WHERE id = ?", ids["L4"])
    assert listed("a100") == [ids["L4"]] and listed("A100") == [ids["L4"]]


def test_list_streams_rows_in_bounded_memory():
    """history --limit 1000000 held every row before printing: 100,000
    recommendations took 749 MB in JSON (a CI job listing a long history
    was killed for memory). Now the rows are written as they are read: 40,000
    of them list in every format within a 100 MiB address space (the old
    code needed over 150 MiB for 20,000) and a peak RSS under 32 MiB, the
    same bytes as a small --limit gives for the newest rows, the oldest
    last. On PostgreSQL too (libpq's single-row mode): libpq received the
    whole result first (52 MB peak RSS for these rows, 14 MB now), and the
    bytes are those of the same rows listed from SQLite. prune --dry-run,
    which held every row it would delete (112-141 MB), likewise."""
    if subprocess.run(["grep", "-q", "AddressSanitizer", BIN]).returncode == 0:
        raise Skip("an address-space limit cannot be set under ASan (its shadow memory needs terabytes)")
    db = new_db("long")
    recommend(db, example("resnet18-cifar10.json"))
    n = 40000
    add_copies(db, n)
    limit = 100 * 1024 * 1024

    # The peak RSS is read by a small process that starts cloudfit: a child
    # of this one counts this one's memory, which it had before its exec.
    measure = ("import resource, subprocess, sys\n"
               "limit = int(sys.argv[2])\n"
               "rc = subprocess.call(sys.argv[3:], preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, "
               "(limit, limit)) if limit else None)\n"
               "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
               "sys.exit(rc)\n")

    def run_bounded(*args, bounded=True):
        p = subprocess.run([sys.executable, "-c", measure, tmp("maxrss"), str(limit if bounded else 0), BIN, *args],
                           capture_output=True, env=ENV, timeout=60)
        assert p.returncode == 0 and p.stderr == b"", (args, p.returncode, p.stderr[-300:])
        peak_kib = int(open(tmp("maxrss")).read())
        assert not bounded or peak_kib < 32 * 1024, (args, f"peak RSS {peak_kib} KiB")
        return p.stdout

    def listed(fmt, *args, bounded=True, of=db):
        return run_bounded("history", "--db", of, "-f", fmt, *args, bounded=bounded)

    json_out = listed("json", "--limit", "1000000")
    rows = json.loads(json_out)
    # the recommendation (SOURCE_DATE_EPOCH: 2026-11-18) first, then its copies of January, newest first
    assert [r["id"] for r in rows] == [1] + list(range(n, 1, -1)), (len(rows), rows[0]["id"], rows[-1]["id"])
    assert json.loads(listed("json", "--limit", "3", bounded=False)) == rows[:3]
    csv_out = listed("csv", "--limit", "1000000")
    assert csv_out.count(b"\r\n") == n + 1, csv_out.count(b"\r\n")
    assert csv_out.startswith(listed("csv", "--limit", "5", bounded=False)), "the newest rows first"
    table = listed("table", "--limit", "1000000").decode()
    lines = table.splitlines()
    assert len(lines) == n + 1 and lines[0].split()[:2] == ["ID", "CREATED"] and lines[-1].split()[0] == "2", lines[-1]
    assert len({len(line) for line in lines[1:]}) == 1, "one width for every row: measured over all of them"
    # prune --dry-run lists what would go as the table does, also as it reads it (it held every row: 112-141 MB)
    dry = run_bounded("history", "--db", db, "prune", "--older-than", "2027-01-01", "--dry-run").decode()
    assert dry.startswith(table) and dry[len(table):].startswith(
        f"dry run: prune would delete {n} recommendations created before 2027-01-01 from "), dry[len(table) - 200:]
    assert dry.count("\n") == n + 2
    if PG:  # the same rows in an SQLite history list byte for byte the same, in every format
        twin = tmp("long-twin.db")
        assert run("recommend", "--db", twin, *FAST, example("resnet18-cifar10.json"))[0] == 0
        add_copies(twin, n, pg=False)
        for fmt, mine in (("json", json_out), ("csv", csv_out), ("table", table.encode())):
            assert mine == listed(fmt, "--limit", "1000000", of=twin), fmt


def test_failed_recommend_leaves_no_new_history():
    """recommend --db NEW.db that failed (a bad option, exit 2; a bad spec, 3; nothing feasible, 4; its
    result not written, 1) left NEW.db behind with cloudfit's tables and no row. A history the command
    created and stored nothing in is removed again; one that was there before is kept."""
    sqlite_only("a PostgreSQL database exists before any command")
    spec = example("resnet18-cifar10.json")
    bad_spec = tmp("bad-gpus.json")
    doc = json.load(open(spec))
    doc["search"]["gpus"] = ["FOO"]
    for gpu, profile in doc.get("profile", {}).get("gpus", {}).items():
        if isinstance(profile, str):
            doc["profile"]["gpus"][gpu] = os.path.join(os.path.dirname(spec), profile)
    json.dump(doc, open(bad_spec, "w"))
    db = tmp("failed-new.db")
    for args, want in ((["--gpu", "FOO", spec], 2), ([bad_spec], 3), (["--deadline-hours", "0.01", spec], 4)):
        rc, out, err = run("recommend", "--db", db, *FAST, *args)
        assert rc == want, (args, rc, err)
        assert not [f for f in os.listdir(os.path.dirname(db)) if f.startswith("failed-new.db")], (args, err)
        rc, out, err = run("recommend", *FAST, *args, env=clean_env(CLOUDFIT_DB=db))
        assert rc == want and not os.path.exists(db), (args, rc, err)
    with open("/dev/full", "w") as full:
        p = subprocess.run([BIN, "recommend", "--db", db, *FAST, spec], stdout=full, stderr=subprocess.PIPE,
                           text=True, env=ENV, timeout=120)
    assert p.returncode == 1 and "No space left" in p.stderr and not os.path.exists(db), p.stderr
    # the default history on first use: its folder goes with it ($XDG_DATA_HOME/cloudfit/, and the folders above
    # it that the command made, stayed behind, empty); one that holds something else stays
    first = tmp("first-use")
    os.makedirs(first, exist_ok=True)
    env = clean_env(XDG_DATA_HOME=os.path.join(first, "data"))
    env.pop("CLOUDFIT_DB", None)
    for args, want in ((["--gpu", "FOO", spec], 2), ([bad_spec], 3), (["--deadline-hours", "0.01", spec], 4)):
        rc, out, err = run("recommend", *FAST, *args, env=env)
        assert rc == want and os.listdir(first) == [], (args, rc, err, os.listdir(first))
    os.makedirs(os.path.join(first, "data", "cloudfit", "keep"))
    rc, out, err = run("recommend", *FAST, "--deadline-hours", "0.01", spec, env=env)
    assert rc == 4 and os.listdir(os.path.join(first, "data", "cloudfit")) == ["keep"], err
    # there before: an empty file (given cloudfit's tables by the open), then a history with a row
    open(db, "w").close()
    rc, out, err = run("recommend", "--db", db, *FAST, "--gpu", "FOO", spec)
    assert rc == 2 and os.path.exists(db), err
    recommend(db, spec)
    rc, out, err = run("recommend", "--db", db, *FAST, "--gpu", "FOO", spec)
    assert rc == 2 and query(db, "SELECT count(*) FROM recommendations") == [(1,)], err


def test_since_until_are_checked_dates():
    db = new_db("dates")
    recommend(db, example("resnet18-cifar10.json"))  # created 2026-11-18T11:06:40Z (SOURCE_DATE_EPOCH)
    for opt in ("--since", "--until"):
        for value, why in (("notadate", "is not a date or time"), ("2026-13-45", "month 13 is not 1-12"),
                           ("2026-02-29", "2026-02 has days 1-28, not 29"), ("2026-04-31", "not 31"),
                           ("2026-11-18T24:00Z", "hour 24 is not 0-23"), ("2026-11-18T12:00", "YYYY-MM-DD"),
                           ("2026-11", "YYYY-MM-DD"), ("", "YYYY-MM-DD")):
            rc, out, err = run("history", "--db", db, opt, value)
            assert rc == 2 and ("option '%s'" % opt) in err and why in err and out == "", (opt, value, rc, err)
    # Dates and times with or without seconds select by the stored UTC time.
    for since, until, n in (("2026-11-18", "2026-11-19", 1), ("2026-11-18T11:06Z", None, 1),
                            ("2026-11-18T11:07Z", None, 0), (None, "2026-11-18T11:06Z", 0),
                            (None, "2026-11-18T11:06:41Z", 1), ("2026-11-18T11:06:40Z", None, 1),
                            ("2024-02-29", "2026-12-31T23:59:59Z", 1)):
        args = (["--since", since] if since else []) + (["--until", until] if until else [])
        rc, out, err = run("history", "--db", db, "-f", "json", *args)
        assert rc == 0 and len(json.loads(out)) == n, (args, rc, out, err)
    rc, out, err = run("history", "--db", db, "prune", "--older-than", "2026-13-01")
    assert rc == 2 and "--older-than" in err and "month 13" in err, (rc, err)
    # a range with no time in it (the two swapped; equal: since inclusive, until exclusive) listed nothing, exit 0
    for since, until in (("2026-12-01", "2026-01-01"), ("2026-11-18", "2026-11-18"), ("1d", "7d")):
        for fmt in ("table", "json", "csv"):
            rc, out, err = run("history", "--db", db, "-f", fmt, "--since", since, "--until", until)
            assert rc == 2 and out == "" and "options '--since' (" in err and "no time is in the range" in err, \
                (since, until, fmt, rc, err)


def test_empty_filters_are_usage_errors():
    """history --spec-hash '' listed every spec's rows (an empty prefix matches all: a script's unset $HASH got
    other jobs' recommendations), and --gpu/--cloud/--model/--branch '' silently listed none; each is a usage
    error naming the option, as docs/exit-codes.md says of empty values (and --since '' already was)."""
    db = new_db("empty_filters")
    recommend(db, example("resnet18-cifar10.json"))
    recommend(db, spec_variant("other-empty", name="other-model"))
    for opt in ("--spec-hash", "--gpu", "--cloud", "--model", "--branch"):
        for fmt in ("json", "table"):
            rc, out, err = run("history", "--db", db, "-f", fmt, opt, "")
            assert rc == 2 and out == "", (opt, fmt, rc, out, err)
            assert ("cloudfit: option '%s' expects " % opt) in err and "got ''" in err, (opt, err)
    # one empty value among good ones is refused too
    rc, out, err = run("history", "--db", db, "--cloud", "gcp", "--cloud", "")
    assert rc == 2 and "option '--cloud'" in err, (rc, err)

def test_table_fits_narrow_widths():
    """Below about 62 columns the table was wider than --width and every line was wrapped: the header split
    ('TOTAL' / '$'), each row's cost alone on the next line. It now gives up the time, the date, the shape and
    the spec name in turn (docs/output.md), so each row stays one line with its id and cost."""
    db = new_db("narrow")
    fill(db)
    for width in (62, 61, 60, 50, 40, 30, 22):
        rc, out, err = run("history", "--db", db, "--width", str(width))
        assert rc == 0, err
        lines = out.splitlines()
        assert all(len(line) <= width for line in lines), (width, out)
        assert lines[0].split()[0] == "ID" and lines[0].endswith("TOTAL $"), (width, out)
        rows = lines[1:6]
        assert [r.split()[0] for r in rows] == ["5", "4", "3", "2", "1"], (width, out)
        assert all(re.search(r"\s\d+\.\d\d$", r) for r in rows), (width, out)
        assert "left out to fit %d columns" % width in re.sub(r"\s+", " ", out), (width, out)
    rc, out, err = run("history", "--db", db, "--width", "60")
    assert "TIME" not in out.splitlines()[0] and "TIME" in re.sub(r"\s+", " ", out.split("left out")[1]), out

def test_csv_guards_formulas():
    db = new_db("formula")
    branches = ["=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1", "plain", "a=1"]
    for branch in branches:
        recommend(db, example("resnet18-cifar10.json"), env=clean_env(CI="true", CLOUDFIT_CI_BRANCH=branch))
    # Bytes as written (run() would turn the CR into a newline).
    p = subprocess.run([BIN, "history", "--db", db, "-f", "csv", "--limit", "100"], capture_output=True, env=ENV)
    assert p.returncode == 0, p.stderr
    got = [r["branch"] for r in csv.DictReader(io.StringIO(p.stdout.decode(), newline=""))][::-1]
    # a tab or CR in a CI variable is stored escaped (no branch holds one), so it starts with '\\'
    shown = [b.replace("\t", "\\t").replace("\r", "\\r") for b in branches]
    assert got == ["'" + b if b[0] in "=+-@\t\r" else b for b in shown], got


def test_show_and_diff():
    db = new_db("show")
    recommend(db, example("resnet18-cifar10.json"), "-n", "4")
    doc2 = recommend(db, example("resnet18-cifar10.json"), "--objective", "time", "-n", "4")
    rc, out, err = run("history", "--db", db, "show", "2")
    assert rc == 0, err
    assert "recommendation 2" in out and doc2["chosen"]["instance_type"] in out and "alternatives" in out, out
    rc, out, err = run("history", "--db", db, "show", "2", "-f", "json")
    shown = json.loads(out)
    assert shown["id"] == 2 and shown["document"]["chosen"] == doc2["chosen"]
    rc, out, err = run("history", "--db", db, "show", "2", "-f", "csv")
    assert len(list(csv.DictReader(io.StringIO(out)))) == 1 + len(doc2["alternatives"])
    rc, out, err = run("history", "--db", db, "diff", "1", "2", "-f", "json")
    assert rc == 0, err
    d = json.loads(out)
    fields = {c["field"]: c for c in d["changes"]}
    assert "objective" in fields and fields["objective"]["before"] == "cost" and fields["objective"]["after"] == "time"
    assert "hours" in fields and fields["hours"]["after"] < fields["hours"]["before"], fields
    assert "catalog_date" in d["unchanged"]
    rc, out, err = run("history", "--db", db, "diff", "1", "2")
    assert "→" in out and "objective" in out, out
    rc, out, err = run("history", "--db", db, "diff", "1", "1", "-f", "csv")
    assert all(r["changed"] == "0" for r in csv.DictReader(io.StringIO(out)))
    rc, out, err = run("history", "--db", db, "show", "99")
    assert rc == 3 and "no recommendation 99" in err, (rc, err)
    rc, out, err = run("history", "--db", db, "show", "x")
    assert rc == 2, rc
    rc, out, err = run("history", "--db", db, "frob")
    assert rc == 2 and "not a history command" in err
    if PG:  # a database without cloudfit's tables: nothing created by a read
        empty = new_db("nope")
        rc, out, err = run("history", "--db", empty)
        assert rc == 3 and "no cloudfit history in" in err, err
        assert query(empty, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'") == [(0,)]
    else:
        rc, out, err = run("history", "--db", tmp("nope.db"))
        assert rc == 3 and "no history database" in err and not os.path.exists(tmp("nope.db")), err


def test_empty_file_is_no_history_yet():
    """A 0-byte file (a command killed while it created the history, or
    `touch`) is no history yet, as a missing file: it read as a foreign
    file, "holds no cloudfit history (schema version 0)"."""
    sqlite_only("an empty file")
    missing = tmp("never.db")
    rc, out, err = run("history", "--db", missing)
    assert rc == 3 and "no history database at" in err, (rc, err)
    for cmd in (["history"], ["history", "show", "1"], ["history", "prune", "--older-than", "1d"],
                ["record", "1", "--total-hours", "1"], ["history", "migrate", "--to", tmp("empty-to.db")]):
        db = tmp("empty.db")
        open(db, "w").close()
        rc, out, err = run(*cmd, "--db", db)
        assert rc == 3 and "no history database at" in err and "the file is empty" in err, (cmd, rc, err)
        assert "schema version 0" not in err, (cmd, err)
        assert os.path.getsize(db) == 0 and not os.path.exists(tmp("empty-to.db")), cmd
    recommend(db, example("resnet18-cifar10.json"), "-n", "4")  # a write starts the history there
    rc, out, err = run("history", "--db", db, "-f", "json")
    assert rc == 0 and len(json.loads(out)) == 1, (rc, err)
    foreign = tmp("foreign.db")  # a file that is not empty keeps its refusal
    with open(foreign, "w") as f:
        f.write("not a database")
    rc, out, err = run("history", "--db", foreign)
    assert rc == 1 and "is damaged" in err and "no history database" not in err, (rc, err)


def test_show_of_an_unreadable_document_warns():
    """A row whose stored document is not JSON (a hand edit): show -f json
    printed "document": null, exit 0, without a word."""
    db = new_db("baddoc")
    recommend(db, example("resnet18-cifar10.json"), "-n", "4")
    query(db, "UPDATE recommendations SET result_json = '{broken' WHERE id = 1")
    rc, out, err = run("history", "--db", db, "show", "1", "-f", "json")
    assert rc == 3, (rc, err)
    assert json.loads(out)["document"] is None, out
    assert "recommendation 1" in err and "not valid JSON" in err and os.path.basename(db) in err, err
    rc, out, err = run("history", "--db", db, "show", "1")  # the table does not show the document
    assert rc == 0 and "recommendation 1" in out, (rc, err)


def test_prune():
    db = new_db("prune")
    old = clean_env(SOURCE_DATE_EPOCH="1700000000")  # 2023-11-14
    recommend(db, example("resnet18-cifar10.json"), env=old)
    recommend(db, spec_variant("pruned-only", name="pruned-only"), env=old)
    recommend(db, example("resnet18-cifar10.json"))
    rc, out, err = run("record", "--db", db, "1", "--step-time-s", "0.5")
    assert rc == 0, err
    rc, out, err = run("history", "--db", db, "prune", "--older-than", "30d")
    assert rc == 0 and "pruned 2 recommendations" in out, (out, err)
    assert query(db, "SELECT id FROM recommendations") == [(3,)]
    assert query(db, "SELECT count(*) FROM alternatives WHERE recommendation_id < 3")[0][0] == 0
    assert query(db, "SELECT name FROM specs") == [("resnet18-cifar10",)]
    # The measurement survives, unlinked from its pruned recommendation.
    assert query(db, "SELECT recommendation_id, gpu FROM measurements")[0][0] is None
    check_db(db)
    rc, out, err = run("history", "--db", db, "prune")
    assert rc == 2 and "--older-than" in err
    rc, out, err = run("history", "--db", db, "prune", "--older-than", "soon")
    assert rc == 2
    # prune deletes by age alone: a list filter there was ignored (every spec's old rows went); now refused
    recommend(db, spec_variant("pruned-only", name="pruned-only"), env=old)
    for args in (["--model", "pruned-only"], ["--branch", "main"], ["--gpu", "T4"], ["--limit", "1"]):
        rc, out, err = run("history", "--db", db, "prune", "--older-than", "30d", *args)
        assert rc == 2 and "history prune deletes by age alone: it does not take " + args[0] in err, (args, err)
    assert query(db, "SELECT count(*) FROM recommendations") == [(2,)]
    rc, out, err = run("history", "--db", db, "--older-than", "30d", "--to", "x.db")
    assert rc == 0 and "note: --older-than applies to 'history prune' only; ignored" in err, err
    assert "note: --to applies to 'history migrate' only; ignored" in err, err
    # the subcommands that write refuse what they would not honour (noted and ignored, prune --to
    # deleted without the copy, migrate --model / --dry-run copied the whole history)
    rc, out, err = run("history", "--db", db, "prune", "--older-than", "9999-12-31", "--to", tmp("archive.db"))
    assert rc == 2 and "history prune deletes, it copies nothing: it does not take --to" in err, err
    assert query(db, "SELECT count(*) FROM recommendations") == [(2,)] and not os.path.exists(tmp("archive.db"))
    for args in (["--model", "pruned-only"], ["--dry-run"], ["--older-than", "30d"], ["--since", "1d"]):
        rc, out, err = run("history", "--db", db, "migrate", "--to", tmp("subset.db"), *args)
        assert rc == 2 and "history migrate copies the whole history: it does not take " + args[0] in err, (args, err)
        assert not os.path.exists(tmp("subset.db")), args
    # prune and migrate print text: -f json there was ignored without a word
    for args in (["prune", "--older-than", "30d", "--dry-run"], ["prune", "--older-than", "30d"],
                 ["migrate", "--to", tmp("format-copy.db")]):
        rc, out, err = run("history", "--db", db, *args, "-f", "json")
        assert rc == 0 and "note: --format applies to 'history list', 'history show' and 'history diff' only; " \
            "ignored" in err, (args, err)


def test_record_replaces_estimate():
    db = new_db("record")
    spec = example("resnet18-cifar10.json")
    first = recommend(db, spec, "--gpu", "L4")
    chosen = first["chosen"]
    gpu = chosen["gpu"]
    measured = chosen["step_time_s"] * 1.5
    rc, out, err = run("record", "--db", db, str(last_id(db)), "--step-time-s", str(measured),
                       "--total-hours", "3", "--total-usd", "12.5", "--note", "run 1")
    assert rc == 0, err
    assert "later recommendations" in out and gpu in out, out
    row = query(db, "SELECT gpu, step_time_s, total_hours, total_usd, note FROM measurements")
    assert row == [(gpu, measured, 3.0, 12.5, "run 1")], row
    second = recommend(db, spec, "--gpu", "L4")
    g = [x for x in second["explanation"]["gpus"] if x["gpu"] == gpu][0]
    assert g["throughput"] == "measured" and "recorded run" in g["note"], g
    assert any("cloudfit record" in n for n in second["explanation"]["notes"]), second["explanation"]["notes"]
    assert second["chosen"]["provenance"]["throughput"] == "measured", second["chosen"]
    # The GPU's line (alpha_s, beta_s) moves by the factor the record puts on its compute time; it stayed as it was.
    before = [x for x in first["explanation"]["gpus"] if x["gpu"] == gpu][0]
    factor = float(g["note"].split("compute time × ")[1])
    for key in ("alpha_s", "beta_s"):
        assert abs(g[key] / (before[key] * factor) - 1) < 0.01, (key, before[key], factor, g)
    # The same configuration is now predicted at the measured step time.
    same = [c for c in [second["chosen"], *second["alternatives"]] if c["instance_type"] == chosen["instance_type"]
            and c["nodes"] == chosen["nodes"] and c["local_batch"] == chosen["local_batch"]]
    if same:
        assert abs(same[0]["step_time_s"] / measured - 1) < 0.02, (same[0]["step_time_s"], measured)
    else:
        assert second["chosen"]["step_time_s"] > chosen["step_time_s"]
    # Another spec is unaffected.
    other = recommend(db, spec_variant("unrelated", name="unrelated"), "--gpu", "L4")
    assert other["chosen"]["provenance"]["throughput"] != "measured"
    rc, out, err = run("record", "--db", db, "999", "--step-time-s", "1")
    assert rc == 3 and "no recommendation 999" in err
    rc, out, err = run("record", "--db", db, "1")
    assert rc == 2 and "nothing to record" in err
    # the usage line said --step-time-s was required (hours or cost alone are taken) and left out --note
    rc, out, err = run("record", "--help")
    usage = " ".join(out.split("\n\n")[0].split())  # the usage line, wrapped to the width
    assert rc == 0 and usage == ("usage: cloudfit record ID [--step-time-s S] [--total-hours H] [--total-usd USD] "
                                 "[--note TEXT]"), out
    # history show lists what was recorded (table and JSON); it was in neither
    rc, out, err = run("history", "show", "--db", db, "1")
    assert rc == 0 and "measured (cloudfit record)" in out and "run 1" in out and "(+50.0%)" in out, out
    rc, out, err = run("history", "show", "--db", db, "1", "-f", "json")
    got = json.loads(out)["measurements"]
    assert len(got) == 1 and abs(got[0]["step_time_s"] / measured - 1) < 1e-9, got
    assert (got[0]["total_hours"], got[0]["total_usd"], got[0]["note"]) == (3.0, 12.5, "run 1"), got


def test_record_refuses_a_step_time_in_other_units():
    """A step time 100× the prediction (per epoch, milliseconds) was stored and then silently clamped by every
    later recommendation, which called the result measured and dropped its uncertainty; 1e308 printed +inf%."""
    db = new_db("record-units")
    spec = example("resnet18-cifar10.json")
    first = recommend(db, spec, "--gpu", "L4")
    predicted = first["chosen"]["step_time_s"]
    for value in (predicted * 100, predicted / 100, 1e308):
        rc, out, err = run("record", "--db", db, str(last_id(db)), "--step-time-s", repr(value))
        assert rc == 2 and "a recorded step time is used within 20× either way" in err, (value, err)
        assert "seconds per optimizer step" in err and "inf" not in err, err
    assert query(db, "SELECT count(*) FROM measurements") == [(0,)]
    # one stored by an earlier cloudfit is used with the clamp said, and its uncertainty kept
    rc, out, err = run("record", "--db", db, str(last_id(db)), "--step-time-s", repr(predicted * 1.1))
    assert rc == 0, err
    query(db, "UPDATE measurements SET step_time_s = ?", predicted * 100)
    second = recommend(db, spec, "--gpu", "L4")
    notes = second["explanation"]["notes"]
    assert any("need the compute time moved more than 20× to be reproduced" in n for n in notes), notes
    # ... and is not called measured (it was, though the compute moved by 20× only): the provenance it had stays
    was = [g for g in first["explanation"]["gpus"] if g["gpu"] == "L4"][0]["throughput"]
    l4 = [g for g in second["explanation"]["gpus"] if g["gpu"] == "L4"][0]
    assert l4["throughput"] == was != "measured" and "recorded run" in l4["note"], (was, l4)
    assert second["chosen"]["provenance"]["throughput"] == was, second["chosen"]["provenance"]


def test_record_shows_a_refused_ratio_past_the_bound():
    """A step time just over 20× the prediction was refused as "is 20× … used within 20×", and hours just under
    1/20 as "is 0.05× … at least 1/20": %.3g rounded the ratio onto the bound. It is shown past it now."""
    db = new_db("record-ratio")
    recommend(db, example("resnet18-cifar10.json"), "--gpu", "L4")
    rid = str(last_id(db))
    step, hours = query(db, "SELECT step_time_s, hours FROM recommendations WHERE id = ?", rid)[0]  # as stored
    for option, value, shown in (("--step-time-s", step * 20.0002, "20.0002×"),
                                 ("--step-time-s", step / 20.0002, "0.0499995×"),
                                 ("--total-hours", hours / 20.0002, "0.0499995×")):
        rc, out, err = run("record", "--db", db, rid, option, repr(value))
        assert rc == 2 and " is %s the " % shown in err, (option, value, err)
    assert query(db, "SELECT count(*) FROM measurements") == [(0,)]


def test_a_refused_record_leaves_the_history_as_it_was():
    """record checked its step time, hours and cost only after opening the history to write: a refused record
    (exit 2, "nothing was stored") had already made a 0644 file private, with a warning. They are checked on the
    read-only handle now, with the id."""
    sqlite_only("a file's mode")
    db = new_db("record-refused")
    first = recommend(db, example("resnet18-cifar10.json"), "--gpu", "L4")
    os.chmod(db, 0o644)
    with open(db, "rb") as f:
        before = f.read()
    for option, value in (("--step-time-s", first["chosen"]["step_time_s"] * 100), ("--total-hours", 1e7),
                          ("--total-usd", first["chosen"]["total_usd"] / 100)):
        rc, out, err = run("record", "--db", db, str(last_id(db)), option, repr(value))
        assert rc == 2 and "made" not in err and out == "", (option, rc, err)
        assert os.stat(db).st_mode & 0o777 == 0o644, oct(os.stat(db).st_mode)
        with open(db, "rb") as f:
            assert f.read() == before
    rc, out, err = run("record", "--db", db, str(last_id(db)), "--step-time-s", repr(first["chosen"]["step_time_s"]))
    assert rc == 0 and "made '" in err and os.stat(db).st_mode & 0o777 == 0o600, (rc, err)  # a write still does

def test_record_refuses_hours_and_cost_out_of_range():
    """--total-usd 1e308 was stored for good (no command deletes a record) and printed with 309 digits; hours and
    cost are now bounded like search.deadline_hours and search.budget_usd (exit 2, nothing stored)."""
    db = new_db("record-range")
    recommend(db, example("resnet18-cifar10.json"), "--gpu", "L4")
    rid = str(last_id(db))
    for option, value, limit in (("--total-usd", "1e308", "1e+12"), ("--total-hours", "1e300", "1e+06"),
                                 ("--total-usd", "1.5e12", "1e+12")):
        rc, out, err = run("record", "--db", db, rid, option, value, "--step-time-s", "0.1")
        assert rc == 2 and option in err and "at most " + limit in err and out == "", (option, value, rc, err)
        assert "0000000000" not in err, err
    # a value just past the bound is shown as it is: %.4g wrote 1000001 as "1e+06", the bound itself
    for option, value in (("--total-hours", "1000001"), ("--total-usd", "1000000000001")):
        rc, out, err = run("record", "--db", db, rid, option, value, "--step-time-s", "0.1")
        assert rc == 2 and "%s %s is more than a run" % (option, value) in err, (option, value, rc, err)
    assert query(db, "SELECT count(*) FROM measurements") == [(0,)]
    rc, out, err = run("record", "--db", db, rid, "--total-usd", "1e12", "--total-hours", "1e6")
    assert rc == 0, err


def test_record_refuses_hours_and_cost_far_under_the_prediction():
    """--total-hours 1e-300 and --total-usd 1e-7 were stored for good ("1e-300 h measured, under a millionth of
    the prediction"): only > 0 was asked. A whole run takes its steps, each at most 20x faster than predicted (the
    step time's bound), so hours or cost more than 20x under the prediction are refused (exit 2, nothing stored)."""
    db = new_db("record-floor")
    first = recommend(db, example("resnet18-cifar10.json"), "--gpu", "L4")
    rid = str(last_id(db))
    hours, usd = first["chosen"]["hours"], first["chosen"]["total_usd"]
    for option, value, words in (("--total-hours", "1e-300", "more than a million times under"),
                                 ("--total-usd", "1e-7", "more than a million times under"),
                                 ("--total-hours", repr(hours / 30), "0.0333× the"),
                                 ("--total-usd", repr(usd / 25), "0.04× the")):
        rc, out, err = run("record", "--db", db, rid, option, value)
        assert rc == 2 and out == "", (option, value, rc, out, err)
        assert "cloudfit: " + option in err and words in err and "at least 1/20 of the prediction" in err, err
    assert query(db, "SELECT count(*) FROM measurements") == [(0,)]
    rc, out, err = run("record", "--db", db, rid, "--total-hours", repr(hours / 19), "--total-usd", repr(usd / 19))
    assert rc == 0, err
    assert query(db, "SELECT count(*) FROM measurements") == [(1,)]


HOSTILE = ["x'; DROP TABLE recommendations; --", "\"quoted\" name", "a%_*", "robert'); DELETE FROM specs;--"]


def test_hostile_names_are_bound_parameters():
    db = new_db("hostile")
    for i, branch in enumerate(HOSTILE):
        name = "evil-" + str(i)  # spec names are restricted to [A-Za-z0-9._-]; branches are free text
        recommend(db, spec_variant(name, name=name), env=clean_env(CI="true", CLOUDFIT_CI_BRANCH=branch,
                                                                    CLOUDFIT_CI_COMMIT=branch))
    assert query(db, "SELECT count(*) FROM recommendations")[0][0] == len(HOSTILE)
    for branch in HOSTILE:
        rc, out, err = run("history", "--db", db, "-f", "json", "--branch", branch)
        assert rc == 0, err
        rows = json.loads(out)
        assert len(rows) == 1 and rows[0]["ci"]["branch"] == branch, (branch, rows)
        rc, out, err = run("history", "--db", db, "-f", "csv", "--branch", branch)
        assert list(csv.DictReader(io.StringIO(out)))[0]["branch"].lstrip("'") == branch
    # Hostile filter values match nothing and break nothing.
    for value in HOSTILE + ["' OR '1'='1", "%"]:
        for opt in ("--model", "--cloud", "--gpu"):
            rc, out, err = run("history", "--db", db, "-f", "json", opt, value)
            assert rc == 0, (opt, value, err)
            got = json.loads(out)
            assert got == [], (opt, value, got)
        for opt in ("--since", "--until", "--spec-hash"):  # not a date, not hex: refused before any SQL
            rc, out, err = run("history", "--db", db, "-f", "json", opt, value)
            assert rc == 2 and "option '%s'" % opt in err and out == "", (opt, value, rc, err)
    # A spec name with SQL in it is rejected by the spec validator before any SQL.
    bad = spec_variant("sqlname", name="x'); DROP TABLE specs;--")
    rc, out, err = run("recommend", "--db", db, *FAST, bad)
    assert rc == 3 and "name" in err, err
    rc, out, err = run("history", "--db", db)
    assert rc == 0 and out.count("\n") == 1 + len(HOSTILE), out
    check_db(db)


def profile_tie_bench(db, name):
    """For the profile-cache order tests: a ResNet-50 spec on AWS T4, `profile(runner)` storing a profile in db
    (trace or the fake exec runner), and `t4_from()` naming the backend of the profile recommend then uses."""
    trace = "trace:" + os.path.join(SRC, "tests", "data", "search-t4-imagenet.csv")
    fake = ("exec:/usr/bin/python3 " + os.path.join(SRC, "tests", "search", "fake_runner.py") +
            " --nodes {nodes} --gpus {gpus_per_node} --batch {local_batch} --instance {instance_type}")
    spec = tmp(name + ".json")
    with open(spec, "w") as f:
        json.dump({"name": "imagenet", "model": {"parameters": 25557032}, "data": {"samples": 1281167},
                   "training": {"epochs": 90, "batch": 200, "lr": 0.08, "optimizer": "momentum"},
                   "profile": {"noise_scale": 4000}, "search": {"objective": "cost", "deadline_hours": 30,
                                                                 "clouds": ["aws"], "max_nodes": 2}}, f)

    def profile(runner):
        rc, out, err = run("profile", "--db", db, spec, "--runner", runner, "--gpu", "T4", "--probe-steps", "3", "-q")
        assert rc == 0, err

    def t4_from():
        rc, out, err = run("recommend", "--db", db, spec, "--gpu", "T4", "--no-history", "-f", "json")
        assert rc == 0, err
        doc = json.loads(out)
        note = [g for g in doc["explanation"]["gpus"] if g["gpu"] == "T4"][0]["note"]
        return "trace" if "(trace, " in note else "runner" if "(runner, " in note else note

    return profile, t4_from, fake, trace, spec


def test_profile_stored_last_wins_a_tie_and_after_migration():
    """Of two cached profiles of one GPU type with the same created_at (whole seconds; SOURCE_DATE_EPOCH fixes it
    here), the one stored last gives the throughput. The cache sorted ties by backend and device name, so a runner
    profile beat a trace profile stored after it, and a re-stored profile kept its place. A history of schema
    version 8 (no profiles.seq) is migrated by the next command that writes; its rows sort as before."""
    db = new_db("profile-tie")
    profile, t4_from, fake, trace, spec = profile_tie_bench(db, "profile-tie")

    profile(fake)
    profile(trace)
    assert len({r[0] for r in query(db, "SELECT created_at FROM profiles")}) == 1  # one second
    assert t4_from() == "trace"  # stored last; was the runner's ("runner" < "trace")
    profile(fake)  # stored again: now the newest
    assert t4_from() == "runner"
    # Back to schema version 8, as an older cloudfit left it: the columns of 9 and 10 gone, ties by name.
    query(db, "ALTER TABLE profiles DROP COLUMN seq")
    query(db, "ALTER TABLE measurements DROP COLUMN after_recommendation")
    if PG:
        query(db, "UPDATE cloudfit_schema SET version = 8")
    else:
        query(db, "PRAGMA user_version = 8")
    rc, out, err = run("recommend", "--db", db, spec, "--gpu", "T4", "--no-history", "-f", "json")
    assert "schema version 8" in err and "cached profiles and price snapshots are not used" in err, err  # read-only
    profile(trace)  # writes: migrates, then stores
    assert query(db, "SELECT backend, seq FROM profiles ORDER BY backend") == [("runner", 0), ("trace", 1)]
    assert t4_from() == "trace"
    profile(fake)
    assert t4_from() == "runner"


def test_profile_damaged_seq_is_tolerated():
    """A profiles.seq edited by hand or damaged counts as 0 (docs/history.md, schema version 9): 2^63 - 1 made the
    next seq overflow, so every later profile of the spec failed on PostgreSQL ("bigint out of range", exit 1) and
    SQLite stored a REAL; it, and text in SQLite, also won every tie of its second over profiles stored after it."""
    db = new_db("profile-bad-seq")
    profile, t4_from, fake, trace, _ = profile_tie_bench(db, "profile-bad-seq")

    def seqs():
        return query(db, "SELECT backend, seq FROM profiles ORDER BY backend")

    profile(trace)
    profile(fake)
    query(db, "UPDATE profiles SET seq = 9223372036854775807 WHERE backend = 'runner'")
    profile(trace)  # failed on PostgreSQL: 'bigint out of range'
    assert len({r[0] for r in query(db, "SELECT created_at FROM profiles")}) == 1  # one second
    assert seqs() == [("runner", 9223372036854775807), ("trace", 2)], seqs()  # counted as 0: 1 + trace's 1
    assert t4_from() == "trace"  # stored last; the damaged seq won the tie
    profile(fake)  # a write of the damaged row sets a sound seq again
    assert seqs() == [("runner", 3), ("trace", 2)], seqs()
    assert t4_from() == "runner"
    # Near the bound (2^62) the next seq stops there, never overflows.
    query(db, "UPDATE profiles SET seq = 4611686018427387903 WHERE backend = 'runner'")
    profile(trace)
    profile(fake)
    assert seqs() == [("runner", 4611686018427387904), ("trace", 4611686018427387904)], seqs()
    if not PG:  # text (SQLite stores what it is given; PostgreSQL's BIGINT refuses it)
        query(db, "UPDATE profiles SET seq = CASE backend WHEN 'runner' THEN 'garbage' ELSE 1 END")
        profile(trace)
        assert seqs() == [("runner", "garbage"), ("trace", 2)], seqs()
        assert t4_from() == "trace"  # text sorted above every number: the damaged row won


if __name__ == "__main__":
    sys.exit(main(globals()))
