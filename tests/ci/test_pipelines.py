#!/usr/bin/python3
"""The example pipelines (examples/ci/) checked with their tools' own rules
and run (issue 28):
  * GitHub Actions: SchemaStore's workflow schema (tests/vendor/schemastore)
    and variants it must refuse; every `run:` script through shellcheck as
    actionlint runs it (`${{ }}` blanked, bash); and a reimplementation of
    two of actionlint's checks: `steps.ID` names a step id of the job, and
    expressions use only contexts GitHub defines. actionlint itself is not
    packaged for Debian 12 and nothing else can be installed here.
  * GitLab CI: GitLab's own CI schema (tests/vendor/gitlab, transcribed)
    and variants it must refuse; every script through shellcheck (bash);
    `needs` and `extends` name jobs of the file.
  * Both: they run on changes under train/, build with the `build` group
    of scripts/install-deps.sh only, and their recommend script, run here
    with the real cloudfit on a checkout, writes the comment for a plan, a
    failed gate (exit 5) and an infeasible spec (exit 4) alike.
Usage: test_pipelines.py CLOUDFIT_BINARY SOURCE_DIR"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
VENDOR = os.path.join(SRC, "tests", "vendor")
TMP = tempfile.mkdtemp(prefix="cloudfit-ci-")
GITHUB = os.path.join(SRC, "examples", "ci", "github-actions.yml")
GITLAB = os.path.join(SRC, "examples", "ci", "gitlab-ci.yml")
CONTEXTS = {"github", "env", "vars", "job", "jobs", "steps", "runner", "secrets", "strategy", "matrix", "needs",
            "inputs"}


def load(path):
    doc = yaml.safe_load(open(path))
    if True in doc:  # YAML 1.1 reads `on` as True; GitHub reads "on"
        doc["on"] = doc.pop(True)
    return doc


def validator(name):
    schema = json.load(open(os.path.join(VENDOR, *name)))
    return jsonschema.validators.validator_for(schema)(schema)


def errors(v, doc):
    return [f"{e.message} at {list(e.path)}" for e in v.iter_errors(doc)]


def shellcheck(script, where):
    """shellcheck on a script as bash runs it; GitHub expressions blanked
    as actionlint does before it calls shellcheck."""
    text = re.sub(r"\$\{\{.*?\}\}", lambda m: "_" * len(m.group(0)), script)
    path = os.path.join(TMP, "script.sh")
    with open(path, "w") as f:
        f.write("#!/bin/bash\nset -e\n" + text + "\n")
    p = subprocess.run(["shellcheck", "-s", "bash", "-S", "warning", path], capture_output=True, text=True)
    assert p.returncode == 0, f"shellcheck on {where}:\n{p.stdout}{p.stderr}"


def need_shellcheck():
    if not shutil.which("shellcheck"):
        if os.environ.get("CI") not in (None, "", "0", "false"):
            raise AssertionError("shellcheck is missing (scripts/install-deps.sh test installs it)")
        raise pyharness.Skip("shellcheck is not installed (scripts/install-deps.sh test installs it)")


# ---- GitHub Actions -------------------------------------------------------------------

def gh_steps(doc):
    return doc["jobs"]["recommend"]["steps"]


def test_github_against_schemastore():
    assert errors(validator(("schemastore", "github-workflow.schema.json")), load(GITHUB)) == []


def test_github_schema_refuses_broken_workflows():
    v = validator(("schemastore", "github-workflow.schema.json"))
    good = load(GITHUB)
    run_step = next(i for i, s in enumerate(gh_steps(good)) if "run" in s)
    uses_step = next(i for i, s in enumerate(gh_steps(good)) if "uses" in s)
    job = lambda d: d["jobs"]["recommend"]  # noqa: E731
    cases = {
        "step key runs": lambda d: job(d)["steps"][run_step].update(runs=job(d)["steps"][run_step].pop("run")),
        "steps as a map": lambda d: job(d).update(steps={"build": {"run": "make"}}),
        "no runs-on": lambda d: job(d).pop("runs-on"),
        "uses and run": lambda d: job(d)["steps"][uses_step].update(run="make"),
        "event filter path": lambda d: d["on"]["pull_request"].update(path=["x"]),
        "permission pull-request": lambda d: d["permissions"].update({"pull-request": "write"}),
        "timeout as text": lambda d: job(d).update({"timeout-minutes": "ten"}),
        "on as True": lambda d: d.update({"true": d.pop("on")}),
    }
    for name, change in cases.items():
        doc = copy.deepcopy(good)
        change(doc)
        assert errors(v, doc), f"the workflow schema accepted: {name}"


def test_github_scripts_pass_shellcheck():
    need_shellcheck()
    for step in gh_steps(load(GITHUB)):
        if "run" in step:
            shellcheck(step["run"], f"step '{step.get('name', step['run'][:30])}'")


def expressions(node):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from expressions(v)
            if k == "if" and isinstance(v, str) and "${{" not in v:
                yield v  # an `if` is an expression without the braces
    elif isinstance(node, list):
        for v in node:
            yield from expressions(v)
    elif isinstance(node, str):
        yield from re.findall(r"\$\{\{(.*?)\}\}", node)


def test_github_expressions_name_real_steps_and_contexts():
    doc = load(GITHUB)
    ids = {s["id"] for s in gh_steps(doc) if "id" in s}
    used = 0
    for expr in expressions(doc):
        text = re.sub(r"'[^']*'", "''", expr)
        for ctx in re.findall(r"(?<![\w.-])([A-Za-z_][\w-]*)\s*\.", text):
            assert ctx in CONTEXTS, f"unknown context '{ctx}' in '{expr}'"
        for step in re.findall(r"\bsteps\.([\w-]+)\.", text):
            assert step in ids, f"'{expr}' names step '{step}', not an id of the job ({sorted(ids)})"
            used += 1
    assert used >= 3, used  # the build cache and the exit code are read through step ids


# ---- GitLab CI ------------------------------------------------------------------------

def test_gitlab_against_its_schema():
    assert errors(validator(("gitlab", "ci.schema.json")), load(GITLAB)) == []


def test_gitlab_schema_refuses_broken_pipelines():
    v = validator(("gitlab", "ci.schema.json"))
    good = load(GITLAB)
    cases = {
        "job key scripts": lambda d: d["cloudfit"].update(scripts=d["cloudfit"].pop("script")),
        "script as a map": lambda d: d["cloudfit"].update(script={"a": "b"}),
        "unknown when": lambda d: d["cloudfit"]["cache"].update(when="sometimes"),
        "cache key with a slash": lambda d: d["cloudfit"]["cache"].update(key="a/b"),
        "six fallback keys": lambda d: d["cloudfit"]["cache"].update(fallback_keys=["k"] * 6),
        "needs as a string": lambda d: d["cloudfit"].update(needs="cloudfit-build"),
        "artifacts when": lambda d: d["cloudfit"]["artifacts"].update(when="sometimes"),
        "rules as a map": lambda d: d["cloudfit"].update(rules={"if": "$A"}),
    }
    for name, change in cases.items():
        doc = copy.deepcopy(good)
        change(doc)
        assert errors(v, doc), f"GitLab's schema accepted: {name}"


def gl_jobs(doc):
    return {k: v for k, v in doc.items() if isinstance(v, dict) and k not in ("variables", "default", "workflow")}


def test_gitlab_scripts_pass_shellcheck():
    need_shellcheck()
    for name, job in gl_jobs(load(GITLAB)).items():
        for key in ("before_script", "script"):
            if key in job:
                lines = job[key] if isinstance(job[key], list) else [job[key]]
                shellcheck("\n".join(lines), f"{name}.{key}")


def test_gitlab_needs_and_extends_name_jobs():
    doc = load(GITLAB)
    jobs = gl_jobs(doc)
    for name, job in jobs.items():
        for need in job.get("needs", []):
            assert (need if isinstance(need, str) else need["job"]) in jobs, (name, need)
        ext = job.get("extends", [])
        for e in [ext] if isinstance(ext, str) else ext:
            assert e in doc, (name, e)
        if "stage" in job:
            assert job["stage"] in doc["stages"], (name, job["stage"])


# ---- both: triggers, build dependencies, the recommend script run for real ----------------

def test_triggers_and_build_dependencies():
    gh, gl = load(GITHUB), load(GITLAB)
    assert gh["on"]["pull_request"]["paths"] == ["train/**"] and gh["on"]["push"]["paths"] == ["train/**"]
    assert all(r["changes"] == ["train/**/*"] for r in gl[".cloudfit-rules"]["rules"])
    for text in (open(GITHUB).read(), open(GITLAB).read()):
        installs = re.findall(r"install-deps\.sh(?! /| \.)( \w+)?", text)  # run, not copied
        assert installs and all(g == " build" for g in installs), installs
        assert "chromium" not in text and "valgrind" not in text and "python3-torch" not in text
    # the history is saved also when the gate failed, and merge requests can read main's
    save = next(s for s in gh_steps(gh) if s.get("uses", "").startswith("actions/cache/save"))
    assert save["if"].startswith("always()")
    restore = next(s for s in gh_steps(gh) if s.get("uses", "").startswith("actions/cache/restore"))
    assert "cloudfit-history-main-" in restore["with"]["restore-keys"]
    cache = gl["cloudfit"]["cache"]
    assert cache["when"] == "always" and cache["unprotect"] is True
    assert cache["fallback_keys"] == ["cloudfit-history-$CI_DEFAULT_BRANCH"]


def checkout(epochs, deadline_hours=24):
    root = tempfile.mkdtemp(dir=TMP)
    os.makedirs(os.path.join(root, ".git"))
    os.makedirs(os.path.join(root, "train"))
    spec = json.load(open(os.path.join(SRC, "examples", "resnet18-cifar10.json")))
    for gpu, profile in spec.get("profile", {}).get("gpus", {}).items():
        if isinstance(profile, str):
            spec["profile"]["gpus"][gpu] = os.path.join(SRC, "examples", profile)
    spec["training"]["epochs"] = epochs
    spec["search"]["deadline_hours"] = deadline_hours
    json.dump(spec, open(os.path.join(root, "train", "model.json"), "w"))
    return root


def run_script(script, root, env):
    """The pipeline's recommend script, with its cloudfit replaced by this build's."""
    script = script.replace("/opt/cloudfit/bin/cloudfit", BIN).replace(".cloudfit-build/bin/cloudfit", BIN)
    p = subprocess.run(["bash", "-e", "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def base_env(root, **extra):
    env = pyharness.clean_env(TMP, CI="true", CLOUDFIT_SPEC="train/model.json",
                              CLOUDFIT_GATES="--cloud gcp --max-cost-increase 10%", **extra)
    env.pop("CLOUDFIT_DB", None)
    return env


def test_github_recommend_script_runs():
    script = next(s["run"] for s in gh_steps(load(GITHUB)) if s.get("id") == "cloudfit")
    outputs = []
    for branch, epochs, deadline, want in (("main", 100, 24, "0"), ("feature", 300, 24, "5"), ("tight", 100, 0.01, "4")):
        root = checkout(epochs, deadline)
        if outputs:  # the cached history of the earlier run (restored by the pipeline)
            shutil.copytree(os.path.join(outputs[0], ".cloudfit"), os.path.join(root, ".cloudfit"))
        out_file = os.path.join(root, "github-output")
        env = base_env(root, GITHUB_OUTPUT=out_file, CLOUDFIT_CI_BRANCH=branch, CLOUDFIT_CI_BASE_BRANCH="main")
        rc, out, err = run_script(script, root, env)
        assert rc == 0, (branch, rc, err)  # the step itself succeeds; the last step fails the check
        assert open(out_file).read().strip() == f"exit={want}", (branch, open(out_file).read(), err)
        md = open(os.path.join(root, "cloudfit.md")).read()
        if want == "4":
            assert "### cloudfit: no recommendation (exit 4)" in md and "deadline" in md, md
        else:
            assert "### Gates:" in md, md
        if want == "5":
            assert "training.epochs 100 → 300" in md, md
        outputs.append(root)


def test_gitlab_recommend_script_runs():
    job = load(GITLAB)["cloudfit"]
    script = "\n".join(line for line in job["script"] if not line.startswith("exit"))
    first = None
    for branch, epochs, deadline, want in (("main", 100, 24, "0"), ("feature", 300, 24, "5"), ("tight", 100, 0.01, "4")):
        root = checkout(epochs, deadline)
        if first:
            shutil.copytree(os.path.join(first, ".cloudfit-history"), os.path.join(root, ".cloudfit-history"))
        env = base_env(root, CLOUDFIT_CI_BRANCH=branch, CLOUDFIT_CI_BASE_BRANCH="main", CI_DEFAULT_BRANCH="main")
        rc, out, err = run_script(script, root, env)
        assert rc == 0, (branch, rc, err)
        assert open(os.path.join(root, "cloudfit.status")).read().strip() == want, (branch, err)
        md = open(os.path.join(root, "cloudfit.md")).read()
        assert "<!-- cloudfit -->" in md  # the marker the note is found again by
        if want == "4":
            assert "no recommendation (exit 4)" in md, md
        first = first or root


if __name__ == "__main__":
    sys.exit(pyharness.run(dict(globals()), cleanup=lambda: shutil.rmtree(TMP, ignore_errors=True)))
