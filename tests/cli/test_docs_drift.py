#!/usr/bin/python3
"""The documentation says what the program does, for the drift a machine can
see: every relative link and anchor in README.md and docs/*.md resolves
(docs/exit-codes.md linked an include/cloudfit/exit_codes.h that never
existed), and every key of `recommend --format json` — on-demand, spot
allowed with its Monte Carlo and elastic plan, and --mix — is named in
docs/output.md (`best_by_kind.spot_configurations_simulated`,
`elastic.warmup.after_lr_jump_factor`, `checkpoint.interval_rule` were not).
Usage: test_docs_drift.py CLOUDFIT_BINARY SOURCE_DIR"""
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = pyharness.temp_dir(prefix="cloudfit-docs-drift-")
ENV = pyharness.clean_env(TMP, CLOUDFIT_CONFIG="/dev/null")
RESNET = os.path.join("examples", "resnet50-imagenet.json")


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


def recommend_json(*args):
    p = subprocess.run([BIN, "recommend", "--no-history", "-q", "-f", "json", *args, RESNET], cwd=SRC,
                       capture_output=True, text=True, env=ENV, timeout=300)
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


def test_every_recommend_json_key_is_in_output_md():
    with open(os.path.join(SRC, "docs", "output.md"), encoding="utf-8") as f:
        doc = f.read()
    named = set(re.findall(r"`([^`]+)`", doc)) | set(re.findall(r'"(\w+)":', doc))
    words = set()
    for span in named:  # `p10/p50/p90`, `hours_p10`…: each word of a code span
        words.update(re.findall(r"\w+", span))
    found = {}
    keys(recommend_json(), "", found)
    keys(recommend_json("--spot", "allow", "--mix"), "", found)
    missing = sorted(path for k, path in found.items() if k not in words)
    assert not missing, "keys of recommend's JSON that docs/output.md does not name:\n  " + "\n  ".join(missing)


if __name__ == "__main__":
    sys.exit(pyharness.run(globals()))
