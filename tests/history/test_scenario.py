#!/usr/bin/python3
"""The two-branch CI scenario of docs/ci.md, end to end (issue 28), on the
backend given (sqlite or postgresql, cfhelp.py):
  1. main records the spec (train/model.json in a repository checkout);
  2. a branch, in another checkout, triples the epochs (90 → 270): the
     content hash changes, the identity (name and path in the repository)
     does not, so the gate finds main's plan and fails with exit 5, naming
     the changed field and the cost change with its 80 % interval;
  3. an unchanged spec on another branch passes, saying the spec is
     unchanged;
  4. --require-baseline on an empty history fails with exit 5 and says what
     it looked for; without it the gate passes as before.
The history rows carry the identity, branch, commit and CI job URL.
Usage: test_scenario.py CLOUDFIT_BINARY SOURCE_DIR [sqlite|postgresql]"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cfhelp import EXAMPLES, PG, clean_env, main, new_db, query, run, tmp  # noqa: E402

GATE_EXIT = 5
FAST = ["--cloud", "gcp"]
IDENTITY = "resnet50-imagenet@train/model.json"


def checkout(name, epochs):
    """A repository checkout (a folder with .git) holding train/model.json:
    resnet50-imagenet with `epochs`, its data files made absolute."""
    root = tmp(name)
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    os.makedirs(os.path.join(root, "train"), exist_ok=True)
    spec = json.load(open(os.path.join(EXAMPLES, "resnet50-imagenet.json")))
    for gpu, profile in spec.get("profile", {}).get("gpus", {}).items():
        if isinstance(profile, str):
            spec["profile"]["gpus"][gpu] = os.path.join(EXAMPLES, profile)
    spec["training"]["epochs"] = epochs
    path = os.path.join(root, "train", "model.json")
    with open(path, "w") as f:
        json.dump(spec, f, indent=2)
    return root


def ci_env(branch, commit, job, base=None):
    extra = dict(CI="true", CLOUDFIT_CI_BRANCH=branch, CLOUDFIT_CI_COMMIT=commit,
                 CLOUDFIT_CI_RUN_ID=str(job), CLOUDFIT_CI_RUN_URL=f"https://ci.example/acme/train/-/jobs/{job}")
    if base:
        extra["CLOUDFIT_CI_BASE_BRANCH"] = base
    return clean_env(**extra)


def recommend(db, root, env, *args):
    return run("recommend", "--db", db, *FAST, *args, "train/model.json", env=env, cwd=root)


def test_two_branches():
    db = new_db("scenario")
    main_tree, branch_tree = checkout("main-checkout", 90), checkout("branch-checkout", 270)
    # 1. main records its plan
    rc, out, err = recommend(db, main_tree, ci_env("main", "a" * 40, 101), "-f", "json")
    assert rc == 0, err
    main_doc = json.loads(out)
    assert main_doc["spec"]["identity"] == IDENTITY, main_doc["spec"]
    row = query(db, "SELECT r.identity, c.branch, c.commit_sha, c.run_url FROM recommendations r"
                    " JOIN ci_runs c ON c.recommendation_id = r.id")
    assert row == [(IDENTITY, "main", "a" * 40, "https://ci.example/acme/train/-/jobs/101")], row

    # 2. the branch triples the epochs: another content, the same identity
    rc, out, err = recommend(db, branch_tree, ci_env("feature/longer", "b" * 40, 102, base="main"),
                             "--max-cost-increase", "10%", "-f", "json")
    assert rc == GATE_EXIT, (rc, err)
    doc = json.loads(out)  # the whole result is printed before the gate decides
    assert doc["spec"]["source_hash"] != main_doc["spec"]["source_hash"]
    gate = doc["gates"][0]
    assert gate["name"] == "max_cost_increase_pct" and not gate["passed"], gate
    message = [line for line in err.splitlines() if line.startswith("cloudfit: gate max_cost_increase_pct failed")]
    assert len(message) == 1, err
    message = message[0]
    assert "spec: training.epochs 90 → 270" in message, message
    before, now = main_doc["chosen"]["total_usd"], doc["chosen"]["total_usd"]
    assert f"cost ${before:.2f} (80 %: $" in message and f"→ ${now:.2f} (80 %: $" in message, message
    pct = 100 * (now - before) / before
    assert f"({pct:+.1f}%)" in message, (message, pct)
    assert re.search(r"against recommendation 1 \(main, ", message), message
    assert "plan: " in message and " h (80 %: " in message, message
    # what the branch's run stored
    stored = query(db, "SELECT r.identity, c.branch, c.base_branch, c.run_url, g.name, g.passed FROM recommendations r"
                       " JOIN ci_runs c ON c.recommendation_id = r.id JOIN gate_results g ON g.recommendation_id = r.id"
                       " WHERE r.id = 2")
    assert stored == [(IDENTITY, "feature/longer", "main", "https://ci.example/acme/train/-/jobs/102",
                       "max_cost_increase_pct", 0)], stored

    # 3. an unchanged spec on another branch passes
    rc, out, err = recommend(db, checkout("other-checkout", 90), ci_env("docs-only", "c" * 40, 103, base="main"),
                             "--max-cost-increase", "10%", "--require-baseline")
    assert rc == 0, (rc, err)
    assert "pass max_cost_increase_pct" in out and "spec: unchanged" in out and "+0.0%" in out, out
    assert "pass require_baseline" in out, out


def test_require_baseline_on_an_empty_history():
    db = new_db("empty-history")
    tree = checkout("lonely-checkout", 90)
    env = ci_env("feature/first", "d" * 40, 201, base="main")
    rc, out, err = recommend(db, tree, env, "--max-cost-increase", "10%")
    assert rc == 0 and "no earlier recommendation to compare with" in out, (rc, err)
    rc, out, err = recommend(new_db("empty-history-2"), tree, env, "--max-cost-increase", "10%", "--require-baseline")
    assert rc == GATE_EXIT, (rc, err)
    assert ("cloudfit: gate require_baseline failed: no baseline: no earlier recommendation for spec "
            f"{IDENTITY} on branch main in ") in err, err
    assert "FAIL require_baseline" in out, out


def test_baseline_key_overrides_the_identity():
    """--baseline-key: two files that are the same job (moved, or kept twice) share one baseline."""
    db = new_db("baseline-key")
    old, moved = checkout("key-a", 90), checkout("key-b", 90)
    os.rename(os.path.join(moved, "train"), os.path.join(moved, "jobs"))
    rc, out, err = run("recommend", "--db", db, *FAST, "--baseline-key", "team-a/resnet50", "train/model.json",
                       env=ci_env("main", "e" * 40, 301), cwd=old)
    assert rc == 0, err
    env = ci_env("feature/move", "f" * 40, 302, base="main")
    rc, out, err = run("recommend", "--db", db, *FAST, "--require-baseline", "jobs/model.json", env=env, cwd=moved)
    assert rc == GATE_EXIT and "resnet50-imagenet@jobs/model.json" in err, (rc, err)
    rc, out, err = run("recommend", "--db", db, *FAST, "--require-baseline", "--baseline-key", "team-a/resnet50",
                       "jobs/model.json", env=env, cwd=moved)
    assert rc == 0 and "pass require_baseline" in out, (rc, err)
    rc, out, err = run("recommend", "--db", db, *FAST, "--baseline-key", "", "jobs/model.json", env=env, cwd=moved)
    assert rc == 2 and "--baseline-key" in err, (rc, err)
    assert PG or os.path.exists(db)


if __name__ == "__main__":
    sys.exit(main(globals()))
