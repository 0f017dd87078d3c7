#!/usr/bin/python3
"""CI gates: each gate passes and fails where it should, with exit code 5
(CF_EXIT_GATE) on failure, and the full result is printed in both cases.
Usage: test_gates.py CLOUDFIT_BINARY SOURCE_DIR"""
import csv
import io
import json
import math
import os
import sys

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cfhelp import SRC, Skip, clean_env, example, main, new_db, query, run, tmp, write  # noqa: E402

SCHEMA = json.load(open(os.path.join(SRC, "data", "schema", "recommendation.schema.json")))

SPEC = example("resnet18-cifar10.json")
FAST = ["--cloud", "gcp"]
GATE_EXIT = 5


def base_json():
    rc, out, err = run("recommend", "--no-history", *FAST, "-f", "json", SPEC)
    assert rc == 0, err
    return json.loads(out)


BASE = None


def chosen():
    global BASE
    if BASE is None:
        BASE = base_json()
    return BASE["chosen"]


def gate_run(*args, fmt="json", db=None, env=None):
    hist = ["--db", db] if db else ["--no-history"]
    return run("recommend", *hist, *FAST, "-f", fmt, *args, SPEC, env=env)


def check(args, expect_pass, name):
    rc, out, err = gate_run(*args)
    doc = json.loads(out)  # the full result is printed whether the gate passes or not
    jsonschema.validate(doc, SCHEMA)
    assert doc["chosen"] == chosen(), "gates must not change the result"
    gates = {g["name"]: g for g in doc["gates"]}
    assert name in gates, gates
    assert gates[name]["passed"] is expect_pass, gates[name]
    if expect_pass:
        assert rc == 0, (rc, err)
    else:
        assert rc == GATE_EXIT, (rc, err)
        assert f"cloudfit: gate {name} failed" in err, err
    return doc, err


def test_max_cost():
    cost = chosen()["total_usd"]
    doc, _ = check(["--max-cost", str(cost * 1.01)], True, "max_cost_usd")
    # the limit comes back through "%.9g"-style JSON numbers: compare within rounding
    assert math.isclose(doc["gates"][0]["value"], cost, rel_tol=1e-8)
    assert math.isclose(doc["gates"][0]["limit"], cost * 1.01, rel_tol=1e-8)
    check(["--max-cost", str(cost * 0.99)], False, "max_cost_usd")


def test_max_hours():
    hours = chosen()["hours"]
    check(["--max-hours", str(hours * 1.01)], True, "max_hours")
    check(["--max-hours", str(hours * 0.99)], False, "max_hours")


def test_max_cost_increase_against_file():
    base = json.loads(json.dumps(BASE or base_json()))
    cost = chosen()["total_usd"]
    # An earlier run that was 10 % cheaper: now +11.1 %.
    base["chosen"]["total_usd"] = cost / 1.111
    path = write("earlier.json", json.dumps(base))
    doc, _ = check(["--compare-to", path, "--max-cost-increase", "12%"], True, "max_cost_increase_pct")
    assert abs(doc["gates"][0]["value"] - 11.1) < 0.05, doc["gates"]
    check(["--compare-to", path, "--max-cost-increase", "10%"], False, "max_cost_increase_pct")
    delta = cost - cost / 1.111
    check(["--compare-to", path, "--max-cost-increase", "$%.4f" % (delta * 1.01)], True, "max_cost_increase_usd")
    check(["--compare-to", path, "--max-cost-increase", "%.4f" % (delta * 0.99)], False, "max_cost_increase_usd")
    # Cheaper than before: a 0 % limit passes.
    base["chosen"]["total_usd"] = cost * 2
    cheaper = write("pricier.json", json.dumps(base))
    check(["--compare-to", cheaper, "--max-cost-increase", "0%"], True, "max_cost_increase_pct")


def test_names_in_the_note_are_cut_at_a_character_boundary():
    """The increase gate's note shortens the baseline's instance type (40 bytes) and GPU (20): it cut at the byte
    count, inside an 'é', and the half character showed as '\\xc3' in every format (docs/ci.md)."""
    base = json.loads(json.dumps(BASE or base_json()))
    base["chosen"]["instance_type"] = "x" + "é" * 30  # 61 bytes: byte 40 falls inside an 'é'
    base["chosen"]["gpu"] = "g" + "é" * 15  # 31 bytes: byte 20 falls inside one
    base["chosen"]["total_usd"] = chosen()["total_usd"] / 2
    path = write("utf8-names.json", json.dumps(base, ensure_ascii=False))
    doc, err = check(["--compare-to", path, "--max-cost-increase", "1%"], False, "max_cost_increase_pct")
    note = doc["gates"][0]["note"]
    assert "× x" + "é" * 18 + "… (" in note, note  # 37 bytes and '…'; was 39 and half an 'é
    assert "×g" + "é" * 8 + "…" in note, note
    assert "\\x" not in note and "\\x" not in err, (note, err)
    for fmt in ("markdown", "table"):
        rc, out, err = gate_run("--compare-to", path, "--max-cost-increase", "1%", fmt=fmt)  # strict UTF-8 decoding
        assert rc == GATE_EXIT and "x" + "é" * 18 + "…" in out and "\\x" not in out + err, (fmt, out, err)


def test_spot_alone_to_spot_with_fallback_is_a_change_everywhere():
    """From spot alone to spot with an on-demand fallback (the cost gate fails): the diff listed only the cost,
    the gate note said the plan was "(1×L4, spot)" both times, and the history called a mixed plan "(spot)"."""
    spec = example("resnet18-cifar10.json")
    rc, out, err = run("recommend", "--no-history", "-f", "json", "--deadline-hours", "60", spec)
    before = json.loads(out)
    if not (before["chosen"]["spot"] and before["chosen"]["spot_model"]["plan"] == "spot"):
        raise Skip("the example's pick at a 60 h deadline is no longer spot alone: %s" % before["chosen"]["spot_model"])
    path = write("spot-alone.json", out)
    db = new_db("mixed")
    rc, out, err = run("recommend", "--db", db, "-f", "markdown", "--deadline-hours", "30", "--compare-to", path, spec)
    assert "`g6.xlarge` (spot+od)" in out or "(spot+od)" in out.split("### Compared")[0], out[:2000]
    assert "| spot (configuration) | yes | spot+od |" in out, out
    rc, out, err = run("recommend", "--no-history", "-f", "markdown", "--deadline-hours", "30", "--compare-to", path,
                       "--max-cost-increase", "0%", spec)
    assert ", spot) → " in out and ", spot+od)" in out, out
    # the history keeps the plan kind
    rc, out, err = run("history", "--db", db)
    assert rc == 0 and "(spot+od)" in out, out
    rc, out, err = run("history", "--db", db, "-f", "json")
    rows = json.loads(out)
    assert rows[0]["chosen"]["spot"] is True and rows[0]["chosen"]["mixed"] is True, rows[0]["chosen"]
    rc, out, err = run("history", "--db", db, "-f", "csv")

    row = next(csv.DictReader(io.StringIO(out)))
    assert (row["spot"], row["mixed"]) == ("1", "1"), row


def test_a_baseline_of_another_job_is_said():
    """A --compare-to document of another job was compared silently: only the spec hashes differed."""
    rc, out, err = run("recommend", "--no-history", "-f", "json", example("resnet18-cifar10.json"))
    other = write("other-job.json", out)
    rc, out, err = run("recommend", "--no-history", "-f", "markdown", "--compare-to", other,
                       example("mlp-synthetic.json"))
    assert rc == 0 and "the baseline is of another job: 'resnet18-cifar10', this one is 'mlp-synthetic'" in out, out


def test_unchanged_against_its_own_document_passes_a_zero_gate():
    """The same recommendation against its own JSON failed --max-cost-increase 0% (exit 5) in 17 of 36 example
    runs: the document holds dollars to 6 significant digits and the gate compared them with the unrounded cost,
    while the markdown said "Nothing changed". The catalog (the embedded one here) compares as the run names it."""
    for spec in ("bert-base-squad.json", "resnet18-cifar10.json", "gpt2-124m-openwebtext.json",
                 "resnet50-imagenet.json"):
        rc, out, err = run("recommend", "--no-history", "-f", "json", example(spec))
        assert rc == 0, err
        own = write("own-" + spec, out)
        for limit in ("0%", "$0"):
            rc, out, err = run("recommend", "--no-history", "-f", "markdown", "--compare-to", own,
                               "--max-cost-increase", limit, example(spec))
            assert rc == 0 and "Nothing changed: same configuration, time and cost." in out, (spec, limit, rc, err)


def test_max_cost_increase_against_base_branch_history():
    db = new_db("gates-history")
    main_env = clean_env(CI="true", CLOUDFIT_CI_BRANCH="main")
    pr_env = clean_env(CI="true", CLOUDFIT_CI_BRANCH="feature", CLOUDFIT_CI_BASE_BRANCH="main")
    # No earlier recommendation: the gate passes and says why.
    rc, out, err = gate_run("--max-cost-increase", "5%", db=db, env=pr_env)
    assert rc == 0, err
    jsonschema.validate(json.loads(out), SCHEMA)
    gate = json.loads(out)["gates"][0]
    assert gate["passed"] and gate["value"] is None and "no earlier" in gate["note"], gate
    # The base branch's run used a cheaper budget-limited spot choice: make it
    # the baseline by recording it on main with a tighter objective.
    rc, out, err = run("recommend", "--db", db, *FAST, "-f", "json", "--spot", "only", "--deadline-hours", "200", SPEC,
                       env=main_env)
    assert rc == 0, err
    main_cost = json.loads(out)["chosen"]["total_usd"]
    rc, out, err = gate_run("--max-cost-increase", "0%", db=db, env=pr_env)
    doc = json.loads(out)
    gate = doc["gates"][0]
    expect = 100 * (doc["chosen"]["total_usd"] - main_cost) / main_cost
    assert abs(gate["value"] - round(expect, 4)) < 0.01, (gate, expect)
    assert gate["passed"] is (expect <= 0) and rc == (0 if expect <= 0 else GATE_EXIT), (gate, rc)
    assert "feature" not in gate["note"] and "main" in gate["note"], gate
    # The gate outcome is stored with the row.
    stored = query(db, "SELECT name, passed FROM gate_results ORDER BY recommendation_id DESC, seq LIMIT 1")
    assert stored == [("max_cost_increase_pct", int(gate["passed"]))], stored


def test_full_output_printed_before_gate_in_every_format():
    cost = chosen()["total_usd"]
    for fmt in ("table", "markdown", "json"):
        rc_ok, out_ok, _ = gate_run(fmt=fmt)
        rc, out, err = gate_run("--max-cost", str(cost / 2), fmt=fmt)
        assert rc == GATE_EXIT and rc_ok == 0, (fmt, rc, err)
        # The same result, plus the gate section.
        if fmt == "table":
            assert out.startswith(out_ok) and "Gates: FAILED" in out and "FAIL max_cost_usd" in out, out
        elif fmt == "markdown":
            assert "### Gates: **failed**" in out and "❌ fail" in out, out
            assert out.split("### Compared")[0] == out_ok.split("### Compared")[0]
        assert "gate max_cost_usd failed" in err
    rc, out, err = gate_run("--max-cost", str(cost * 2), fmt="markdown")
    assert rc == 0 and "### Gates: passed" in out and "✅ pass" in out


def test_gate_failure_still_records_and_writes_out_file():
    db = new_db("gate-record")
    out_file = tmp("gated.json")
    rc, out, err = run("recommend", "--db", db, *FAST, "-f", "json", "-o", out_file, "--max-hours", "0.001", SPEC)
    assert rc == GATE_EXIT and out == "", (rc, out, err)
    doc = json.load(open(out_file))
    assert doc["gates"][0]["passed"] is False
    assert query(db, "SELECT passed FROM gate_results") == [(0,)]


def test_gate_usage_errors():
    for args, text in ((["--max-cost-increase", "ten"], "percentage"), (["--max-cost-increase", "-5%"], "percentage"),
                       (["--max-cost", "0"], "positive number"), (["--compare-to", tmp("missing.json")], "cannot open")):
        rc, out, err = gate_run(*args)
        assert rc in (2, 3) and text in err, (args, rc, err)
        assert out == "", out
    bad = write("bad-baseline.json", json.dumps({"chosen": {"cloud": "gcp"}}))
    rc, out, err = gate_run("--compare-to", bad, "--max-cost-increase", "1%")
    assert rc == 3 and "chosen.region" in err, err


def test_limits_past_the_spec_ranges_refused():
    """--max-hours 1e300 was taken and its note read 'limit 10000000000000000525047602552044202487044685811 h'
    (1e300 cut at 46 digits), in the history and the pull-request comment too."""
    for args, text in ((["--max-hours", "1e300"], "option '--max-hours' expects a positive number of hours up to 1e6"),
                       (["--max-cost", "1e13"], "option '--max-cost' expects a positive number of US dollars up to 1e12"),
                       (["--max-cost-increase", "$1e13"], "(more than 1e12, the range of search.budget_usd)"),
                       (["--max-cost-increase", "1e13%"], "(more than 1e12%)")):
        rc, out, err = gate_run(*args)
        assert rc == 2 and text in err and out == "", (args, rc, err)
    check(["--max-hours", "1e6", "--max-cost", "1e12"], True, "max_hours")


def test_a_damaged_baseline_row_stops_the_gate():
    """A history row whose cost was Infinity (another tool, a hand edit) was compared as is: the gate passed with
    '-inf USD (-nan%)'; -5 gave 'cost $-5.00'. The same cost in a --compare-to document is refused."""
    db = new_db("gates-damaged")
    rc, out, err = gate_run(db=db)
    assert rc == 0, err
    # a cost past 1e15 (Infinity, 1e16) was told it must be "above 0": the message gives both bounds
    for bad, shown in ((float("inf"), "got inf"), (1e16, "got 1e+16"), (-5, "got -5"), (0, "got 0")):
        query(db, "UPDATE recommendations SET total_usd = ?", bad)
        rc, out, err = gate_run("--max-cost-increase", "10%", db=db)
        assert rc == 3 and out == "", (bad, rc, err[-400:])
        assert "recommendation 1: total_usd: expected a cost above 0 (a chosen plan is never free) and at most 1e15, " \
            + shown in err, err
        assert "DELETE FROM recommendations WHERE id = 1" in err, err
        # no gate needs it: no baseline, the run goes on (the markdown compares with nothing)
        rc, out, err = gate_run(db=db, fmt="markdown")
        assert rc == 0 and "No earlier recommendation for this spec to compare with." in out, (rc, err)
        query(db, "DELETE FROM recommendations WHERE id <> 1")


def test_a_baseline_under_a_cent_has_no_percentage():
    """A baseline costing $2e-299 (a price override of 1e-300 $/h) gave '+2289998064519032778437511343597747145852731103'
    in the note (the percentage cut at 46 digits, its % lost) and a value of 2.3e301."""
    base = json.loads(json.dumps(BASE or base_json()))
    base["chosen"]["total_usd"] = 2.2e-299
    tiny = write("tiny.json", json.dumps(base))
    rc, out, err = gate_run("--compare-to", tiny, "--max-cost-increase", "10%")
    gate = json.loads(out)["gates"][0]
    assert rc == GATE_EXIT and gate["value"] is None and not gate["passed"], (rc, gate)
    assert "(from $0.00: no percentage)" in gate["note"], gate


def test_pull_request_from_a_branch_named_like_the_base_is_no_baseline():
    """A fork's pull request from its own 'main' was stored with branch 'main' and became main's baseline for
    every later pull request (its gate failed, its row still moved the baseline)."""
    db = new_db("gates-fork")
    rc, out, err = run("recommend", "--db", db, *FAST, "-f", "json", SPEC,
                       env=clean_env(CI="true", CLOUDFIT_CI_BRANCH="main"))
    assert rc == 0, err
    main_cost = json.loads(out)["chosen"]["total_usd"]
    fork = clean_env(GITHUB_ACTIONS="true", GITHUB_HEAD_REF="main", GITHUB_BASE_REF="main",
                     GITHUB_REF="refs/pull/7/merge", GITHUB_SHA="ab" * 20)
    rc, out, err = run("recommend", "--db", db, *FAST, "-f", "json", "--objective", "time", SPEC, env=fork)
    assert rc == 0, err
    fork_cost = json.loads(out)["chosen"]["total_usd"]
    assert fork_cost != main_cost, (fork_cost, main_cost)
    pr = clean_env(CI="true", CLOUDFIT_CI_BRANCH="feature", CLOUDFIT_CI_BASE_BRANCH="main",
                   CLOUDFIT_CI_PULL_REQUEST="8")
    rc, out, err = gate_run("--max-cost-increase", "0%", "--objective", "time", db=db, env=pr)
    gate = json.loads(out)["gates"][0]
    assert rc == GATE_EXIT and "against recommendation 1 " in gate["note"], gate  # main's, not the fork's 2
    assert math.isclose(gate["value"], 100 * (fork_cost - main_cost) / main_cost, rel_tol=1e-4), (gate, fork_cost, main_cost)


def test_a_push_build_compares_with_its_own_branch_not_a_pull_request():
    """GitHub's push to main sets no GITHUB_BASE_REF: the baseline was the newest run of any branch, an unmerged
    pull request's, and main's own unchanged plan failed its gate against it."""
    db = new_db("gates-push")
    push = clean_env(GITHUB_ACTIONS="true", GITHUB_REF_NAME="main", GITHUB_REF="refs/heads/main",
                     GITHUB_SHA="cd" * 20)
    rc, out, err = run("recommend", "--db", db, *FAST, "-f", "json", SPEC, env=push)
    assert rc == 0, err
    pr = clean_env(GITHUB_ACTIONS="true", GITHUB_HEAD_REF="cheaper", GITHUB_BASE_REF="main",
                   GITHUB_REF="refs/pull/7/merge", GITHUB_SHA="ab" * 20)
    rc, out, err = run("recommend", "--db", db, *FAST, "-f", "json", "--objective", "time", SPEC, env=pr)
    assert rc == 0, err
    rc, out, err = gate_run("--max-cost-increase", "0%", db=db, env=push)
    gate = json.loads(out)["gates"][0]
    assert rc == 0 and gate["passed"] and "against recommendation 1 (main," in gate["note"], (rc, gate)
    # a branch with no run of its own still finds the newest of any branch
    rc, out, err = gate_run("--max-cost-increase", "1000%", db=db,
                            env=clean_env(GITHUB_ACTIONS="true", GITHUB_REF_NAME="new", GITHUB_REF="refs/heads/new"))
    gate = json.loads(out)["gates"][0]
    assert rc == 0 and "against recommendation 3 (main," in gate["note"], (rc, gate)


def test_empty_base_branch_and_free_baseline_refused():
    """--base-branch '' searched branch '' and never found a baseline; a baseline of $0 failed the percentage
    gate at +inf % while its note said +0.0 %."""
    rc, out, err = gate_run("--base-branch", "", "--max-cost-increase", "5%")
    assert rc == 2 and "option '--base-branch' needs a non-empty branch name" in err and out == "", (rc, err)
    base = json.loads(json.dumps(BASE or base_json()))
    base["chosen"]["total_usd"] = 0
    free = write("free.json", json.dumps(base))
    rc, out, err = gate_run("--compare-to", free, "--max-cost-increase", "5%")
    assert rc == 3 and "chosen.total_usd: expected a cost above 0" in err, (rc, err)


def test_base_branch_with_compare_to_is_said_to_be_ignored():
    """--base-branch beside --compare-to was ignored without a word (--entrypoint without --emit gets a note)."""
    base = write("own.json", json.dumps(BASE or base_json()))
    rc, out, err = gate_run("--compare-to", base, "--base-branch", "release", "--max-cost-increase", "1%")
    assert rc == 0, err
    assert "note: --base-branch chooses a baseline in the history; ignored with --compare-to" in err, err
    rc, out, err = gate_run("--compare-to", base, "--max-cost-increase", "1%")
    assert rc == 0 and "--base-branch" not in err, err


def test_a_document_of_another_version_is_no_baseline():
    """A --compare-to document of version "2" (a newer cloudfit) was taken as a baseline without a word."""
    base = json.loads(json.dumps(BASE or base_json()))
    base["version"], base["metadata"]["tool"] = "2", "cloudfit 9.0.0"
    newer = write("newer.json", json.dumps(base))
    rc, out, err = gate_run("--compare-to", newer, "--max-cost-increase", "5%")
    assert rc == 3 and out == "", (rc, out, err)
    assert f"{newer}: version: expected \"1\"" in err and 'got "2" (written by cloudfit 9.0.0)' in err, err


def test_gate_note_shows_the_digits_that_decide():
    """'predicted total cost $50.88, limit $50.88' for a failed gate: two decimals hid why."""
    cost = chosen()["total_usd"]
    limit = cost * (1 - 1e-6)
    assert "%.2f" % limit == "%.2f" % cost
    doc, _ = check(["--max-cost", repr(limit)], False, "max_cost_usd")
    note = doc["gates"][0]["note"]
    shown = [w.rstrip(",").lstrip("$") for w in note.split() if w.startswith("$")]
    assert len(shown) == 2 and shown[0] != shown[1] and float(shown[0]) > float(shown[1]), note


def test_a_changed_price_overrides_file_is_named():
    """A --price-overrides file that changed since the baseline (a 20 % discount that ended) moved the cost by +25 %,
    and the gate's note said only 'spec: unchanged; plan: …' (history and --compare-to alike): the cause unnamed."""
    import hashlib
    db = new_db("gates-overrides")
    ov = write("ov.json", json.dumps({"discounts": [{"cloud": "gcp", "percent": 20, "note": "CUD"}]}))
    sha_before = hashlib.sha256(open(ov, "rb").read()).hexdigest()
    rc, out, err = gate_run("--price-overrides", ov, db=db)
    assert rc == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["catalog"]["price_overrides"]["sha256"] == sha_before, doc["catalog"]["price_overrides"]
    base = write("ov-base.json", out)
    write("ov.json", json.dumps({"discounts": [{"cloud": "gcp", "percent": 1, "note": "CUD"}]}))
    sha_after = hashlib.sha256(open(ov, "rb").read()).hexdigest()
    changed = f"evidence: price overrides {ov} changed (sha256 {sha_before[:12]}… → {sha_after[:12]}…); plan: "
    # the document, then the history's baseline (read through --db; --no-history records nothing)
    for where, hist in ((["--compare-to", base], None), (["--no-history"], db)):
        for fmt in ("json", "table", "markdown"):
            rc, out, err = gate_run("--price-overrides", ov, "--max-cost-increase", "5%", *where, fmt=fmt, db=hist)
            assert rc == GATE_EXIT, (where, fmt, rc, err)
            # a markdown table cell escapes the '_' a temporary folder's random name may hold
            shown = changed.replace("_", "\\_") if fmt == "markdown" else changed
            assert changed in err and shown in out, (where, fmt, err, out)
    rc, out, err = gate_run("--max-cost-increase", "5%", "--compare-to", base)
    assert rc == GATE_EXIT and f"evidence: price overrides {ov} → none; plan: " in err, err


if __name__ == "__main__":
    sys.exit(main(globals()))
