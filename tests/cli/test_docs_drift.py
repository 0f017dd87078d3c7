#!/usr/bin/python3
"""The documentation says what the program does, for the drift a machine can
see: every relative link and anchor in README.md and docs/*.md resolves
(docs/exit-codes.md linked an include/cloudfit/exit_codes.h that never
existed), and every key of `recommend --format json` — on-demand, spot
allowed with its Monte Carlo and elastic plan, and --mix — is named in
docs/output.md (`best_by_kind.spot_configurations_simulated`,
`elastic.warmup.after_lr_jump_factor`, `checkpoint.interval_rule` were not);
likewise the JSON of the other commands, each on tiny inputs, against the page
that documents it (search.md, spot.md, profiler.md, model.md, pricing.md,
history.md: `search.savings.current_usd`, the whole of `simulate`'s and
`validate`'s documents and `prices`' offers were named nowhere).
Usage: test_docs_drift.py CLOUDFIT_BINARY SOURCE_DIR"""
import functools
import glob
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = pyharness.temp_dir(prefix="cloudfit-docs-drift-")
ENV = pyharness.clean_env(TMP, CLOUDFIT_CONFIG="/dev/null")
RESNET = os.path.join("examples", "resnet50-imagenet.json")
TRACES = os.path.join("examples", "spot-traces")
TRACE = os.path.join("tests", "data", "search-t4-imagenet.csv")  # the measurements the search tests replay


def prose_lines(path):
    """(line number, text) outside fenced code blocks, inline code spans
    removed (a regular expression in backticks is not a link)."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if not fenced:
                yield n, re.sub(r"(`+)(?:(?!\1).)+?\1", "", line)


def github_anchors(path):
    """The anchors GitHub gives a file's headings: lower case, punctuation
    but '-' and '_' dropped, spaces to '-', a repeat numbered -1, -2, …"""
    anchors, seen = set(), {}
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1).replace("`", ""))
            slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
            anchors.add(slug if slug not in seen else "%s-%d" % (slug, seen[slug] + 1))
            seen[slug] = seen.get(slug, -1) + 1
    return anchors


def test_relative_links_and_anchors_resolve():
    broken = []
    for doc in [os.path.join(SRC, "README.md")] + sorted(glob.glob(os.path.join(SRC, "docs", "*.md"))):
        for n, line in prose_lines(doc):
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                path, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                where = "%s:%d: %s" % (os.path.relpath(doc, SRC), n, target)
                if not os.path.exists(resolved):
                    broken.append(where + " (no such file)")
                elif anchor and resolved.endswith(".md") and anchor not in github_anchors(resolved):
                    broken.append(where + " (no such heading)")
    assert not broken, "broken links:\n  " + "\n  ".join(broken)


HISTORY = os.path.join(TMP, "history.db")


@functools.lru_cache(maxsize=None)
def recommend_json(*args):
    """Stored in HISTORY, run once for the two tests that read it."""
    p = subprocess.run([BIN, "recommend", "--db", HISTORY, "-q", "-f", "json", *args, RESNET], cwd=SRC,
                       capture_output=True, text=True, env=ENV, timeout=300)
    assert p.returncode == 0, (args, p.returncode, p.stderr)
    return json.loads(p.stdout)


def cloudfit_json(*args):
    p = subprocess.run([BIN, *args], cwd=SRC, capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, (args, p.returncode, p.stderr)
    return json.loads(p.stdout)


def keys(value, path, out):
    if isinstance(value, dict):
        for k, v in value.items():
            out.setdefault(k, path + "." + k)
            keys(v, path + "." + k, out)
    elif isinstance(value, list):
        for v in value:
            keys(v, path + "[]", out)


def documented_words(*pages):
    """Each word of each code span (`p10/p50/p90`, `hours_p10`…) and each "key": of the
    pages; the fences of code blocks are left out, so that they do not pair with a backtick."""
    words = set()
    for page in pages:
        with open(os.path.join(SRC, "docs", page), encoding="utf-8") as f:
            doc = "".join(line for line in f if not line.lstrip().startswith("```"))
        for span in set(re.findall(r"`([^`]+)`", doc)) | set(re.findall(r'"(\w+)":', doc)):
            words.update(re.findall(r"\w+", span))
    return words


def assert_documented(pages, *documents):
    found = {}
    for document in documents:
        keys(document, "", found)
    words = documented_words(*pages)
    missing = sorted(path for k, path in found.items() if k not in words)
    assert not missing, "keys of the JSON that docs/%s do not name:\n  %s" % (
        ", docs/".join(pages), "\n  ".join(missing))


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def test_every_recommend_json_key_is_in_output_md():
    assert_documented(["output.md"], recommend_json(), recommend_json("--spot", "allow", "--mix"))


def test_every_history_json_key_is_in_history_md():
    """The two recommendations of recommend's test, stored: the list, one row and their diff."""
    recommend_json()
    recommend_json("--spot", "allow", "--mix")
    db = ["--db", HISTORY]
    assert_documented(["history.md", "output.md"], cloudfit_json("history", *db, "-f", "json"),
                      cloudfit_json("history", *db, "show", "1", "-f", "json"),
                      cloudfit_json("history", *db, "diff", "1", "2", "-f", "json"))


def test_every_search_json_key_is_in_search_md():
    """The trace runner on the shipped T4 measurements, with training.current (savings) and spot plans."""
    spec = write("imagenet.json", json.dumps({
        "name": "imagenet", "model": {"parameters": 25557032}, "data": {"samples": 1281167},
        "training": {"epochs": 90, "batch": 200, "lr": 0.08, "optimizer": "momentum",
                     "current": {"gpu": "T4", "gpus_per_node": 4, "nodes": 1}},
        "profile": {"noise_scale": 4000}, "search": {"objective": "cost", "deadline_hours": 30}}))
    assert_documented(["search.md", "output.md"],
                      cloudfit_json("search", spec, "--runner", "trace:" + TRACE, "--no-history", "-q", "-f", "json",
                                    "--seed", "3", "--spot", "allow"))


def test_every_simulate_json_key_is_in_spot_md():
    """A replay of one shipped trace, and --calibrate on a folder of that one trace."""
    name = "availability_1node_02-15-2023_us-east-1c_V100x1.csv"
    folder = os.path.join(TMP, "traces")
    os.makedirs(folder, exist_ok=True)
    shutil.copy(os.path.join(SRC, TRACES, name), folder)
    with open(os.path.join(SRC, TRACES, "index.csv"), encoding="utf-8") as f:
        index = [line for n, line in enumerate(f) if n == 0 or line.startswith(name + ",")]
    write(os.path.join("traces", "index.csv"), "".join(index))
    age = ["--max-catalog-age-days", "100000", "-f", "json"]
    assert_documented(["spot.md"], cloudfit_json("simulate", RESNET, "--trace", os.path.join(TRACES, name), *age),
                      cloudfit_json("simulate", RESNET, "--calibrate", folder, *age))


def test_every_validate_json_key_is_in_model_md():
    """Each of the three kinds: step times, --gns and --crossgpu, on a few rows."""
    cross = write("crossgpu.csv", "gpu,gpu_count,model,precision,batch_size_per_gpu,throughput\n" + "".join(
        "%s,1,resnet50,%s,64,%d\n" % row for row in [("V100", "fp32", 350), ("A100-40GB", "fp32", 600),
                                                      ("A100-40GB", "tf32", 1000), ("V100", "fp16", 900),
                                                      ("A100-40GB", "bf16", 2000), ("H100", "fp32", 1200)]))
    traces = write("gns-traces.csv", "model,batch_size,m0,epoch,progress,iteration,metric,b_noise\n" + "".join(
        "cifar10,%d,128,%d,%d,%d,%.3f,%.1f\n" % (batch, e, e * progress, e * per_epoch, 0.5 + e * 0.02, 300.0 + 40 * e)
        for batch, per_epoch, progress in ((128, 100, 100), (512, 30, 90)) for e in range(1, 21)))
    models = write("gns-models.csv", "model,m0,metric_name,metric_better\ncifar10,128,acc,higher\n")
    assert_documented(["model.md"], cloudfit_json("validate", "-f", "json", TRACE),
                      cloudfit_json("validate", "-f", "json", "--crossgpu", cross),
                      cloudfit_json("validate", "-f", "json", "--gns", traces, "--models", models))


def test_every_prices_json_key_is_in_pricing_md():
    assert_documented(["pricing.md"], cloudfit_json("prices", "-f", "json"), cloudfit_json("prices", "A100", "-f", "json"))


def test_every_profile_json_key_is_in_profiler_md():
    """The CPU engine on a tiny MLP, and the trace runner (its `runner` object)."""
    spec = write("tiny.json", json.dumps({
        "name": "tiny", "model": {"architecture": {"type": "mlp", "layers": [4, 8, 3]}},
        "data": {"samples": 100}, "training": {"epochs": 1, "batch": 16, "lr": 0.05},
        "profile": {"backend": "cpu", "local_batches": [2, 4], "steps": 3}}))
    db = os.path.join(TMP, "profiles.db")
    assert_documented(["profiler.md"], cloudfit_json("profile", "-q", "--noise-steps", "3", "--db", db, "-f", "json", spec),
                      cloudfit_json("profile", "-q", "--runner", "trace:" + TRACE, "--gpu", "T4", "--db", db, "-f", "json",
                                    write("imagenet-t4.json", json.dumps({
                                        "name": "imagenet", "model": {"parameters": 25557032},
                                        "data": {"samples": 1281167},
                                        "training": {"epochs": 90, "batch": 200, "lr": 0.08}}))))


if __name__ == "__main__":
    sys.exit(pyharness.run(globals()))
