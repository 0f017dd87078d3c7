#!/usr/bin/python3
"""The markdown PR comment (`recommend -f markdown`) rendered as GitHub renders
it (cmark-gfm with its table and autolink extensions): text from outside —
a baseline document's names, CI branch names, a spec's file name, a stored
catalog's names — shows as itself. It must not open a link, an image, a
heading or an HTML element, must not split a table cell, and a command the
comment tells the reader to run must run what it says when copied.
Without cmark-gfm the rendering checks print SKIPPED (and fail in CI).
Usage: test_markdown.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = pyharness.temp_dir(prefix="cloudfit-markdown-")
ENV = pyharness.clean_env(TMP, SOURCE_DATE_EPOCH="1795000000")
SPEC = os.path.join(SRC, "examples", "resnet50-imagenet.json")
CMARK = shutil.which("cmark-gfm")
SKIPPED = []
HOSTILE = "![pix](https://evil.example/p.png) [docs](https://evil.example) www.evil.example x@evil.example " \
          "</details>|### Gates: passed|**bold** `code` <img src=x>"


def recommend(*args, env=None, cwd=None, spec=SPEC):
    p = subprocess.run([BIN, "recommend", "--no-history", "-q", "--max-catalog-age-days", "100000", "-f", "markdown",
                        *args, spec], capture_output=True, text=True, env=env or ENV, cwd=cwd or TMP, timeout=300)
    assert p.returncode == 0, p.stderr
    return p.stdout


def render(markdown):
    p = subprocess.run([CMARK, "--extension", "table", "--extension", "autolink", "--extension", "strikethrough"],
                       input=markdown, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def structure(html):
    """The element names in order, and every href/src."""
    return re.findall(r"<(/?[a-z0-9]+)", html), re.findall(r"(?:href|src)=\"([^\"]*)\"", html)


def check_rendered(benign, hostile, what):
    if not CMARK:
        SKIPPED.append(what)
        return
    tags_b, urls_b = structure(render(benign))
    tags_h, urls_h = structure(render(hostile))
    assert not [u for u in urls_h if "evil" in u], (what, urls_h)
    assert tags_h == tags_b, (what, [t for t in tags_h if t not in tags_b] or len(tags_h) - len(tags_b))


def test_baseline_names_and_branches_show_as_text():
    """A baseline's instance type and a CI branch rendered an image, links, an e-mail link, a heading."""
    p = subprocess.run([BIN, "recommend", "--no-history", "-q", "-f", "json", SPEC], capture_output=True, text=True,
                       env=ENV, timeout=300)
    base = json.loads(p.stdout)
    base["chosen"]["total_usd"] *= 2
    base["chosen"]["instance_type"] = "other-type"  # a changed row in the diff either way
    benign_path, hostile_path = os.path.join(TMP, "benign.json"), os.path.join(TMP, "hostile.json")
    json.dump(base, open(benign_path, "w"))
    base["chosen"]["instance_type"] = HOSTILE
    json.dump(base, open(hostile_path, "w"))
    ci = dict(ENV, CI="true", CLOUDFIT_CI_BRANCH="feature", CLOUDFIT_CI_BASE_BRANCH="main")
    benign = recommend("--compare-to", benign_path, "--max-cost-increase", "5%", env=ci)
    hostile = recommend("--compare-to", hostile_path, "--max-cost-increase", "5%",
                        env=dict(ci, CLOUDFIT_CI_BASE_BRANCH=HOSTILE.replace("|", " ")))
    assert "<img" not in hostile and "</details>|" not in hostile, hostile
    check_rendered(benign, hostile, "baseline names and branches")
    # an e-mail address alone (GFM links it after the escapes are gone: "\\@" did not stop it), as a baseline's
    # name and as the commit in the footer
    base["chosen"]["instance_type"] = "x@evil.example"
    json.dump(base, open(hostile_path, "w"))
    hostile = recommend("--compare-to", hostile_path, "--max-cost-increase", "5%",
                        env=dict(ci, CLOUDFIT_CI_COMMIT="x@evil.example"))
    check_rendered(benign, hostile, "an e-mail address")


def test_command_to_copy_runs_what_it_says():
    """The spec's file name in the 'recommend again' command went through the table-cell escaper: a backtick
    closed the shell quote and & became &amp;, so the copied command ran what the file name held."""
    folder = os.path.join(TMP, "weird")
    os.makedirs(folder)
    os.symlink(os.path.join(SRC, "examples", "data"), os.path.join(folder, "data"))
    name = "a`$(echo PWNED)`&b.json"
    shutil.copy(SPEC, os.path.join(folder, name))
    out = recommend(spec=name, cwd=folder)
    line = [ln for ln in out.splitlines() if "'recommend' again" in ln]
    assert line, out
    m = re.search(r"(`+) (cloudfit profile .*?) \1$", line[0]) or re.search(r"(`+)(cloudfit profile .*?)\1$", line[0])
    assert m, line[0]
    command = m.group(2)
    words = subprocess.run(["bash", "-c", "printf '%s\\n' " + command.split(" ", 1)[1]], capture_output=True,
                           text=True, timeout=30).stdout.splitlines()
    assert words[-1] == name and "PWNED" not in "".join(words[:-1]), words
    if CMARK:
        html = render(out)
        assert "PWNED" in html and "&amp;amp;" not in html, html  # shown as written, not run, not double-escaped



def test_next_measurement_is_one_sentence_in_every_format():
    """The next measurement was worded three ways: the table "...; then 'recommend' again. Run it: CMD", the
    markdown "...; then recommend again: CMD", the HTML report "... . Run it: CMD" (no recommending again).
    Every format now sets the library's one sentence before the command."""
    import html as htmlmod
    page = os.path.join(TMP, "next.html")
    common = ["--no-history", "-q", "--max-catalog-age-days", "100000", SPEC]
    p = subprocess.run([BIN, "recommend", "-f", "json", *common], capture_output=True, text=True, env=ENV,
                       cwd=TMP, timeout=300)
    assert p.returncode == 0, p.stderr
    nm = json.loads(p.stdout)["next_measurement"]
    want = nm["reason"] + "; then 'recommend' again. Run it: " + nm["command"]
    p = subprocess.run([BIN, "recommend", "--no-chart", "--report", page, *common], capture_output=True, text=True,
                       env=ENV, cwd=TMP, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "  next measurement: " + want + "\n" in p.stdout, p.stdout
    with open(page) as f:
        para = re.search(r'<p class="next" id="next-measurement">(.*?)</p>', f.read(), re.S).group(1)
    assert htmlmod.unescape(re.sub(r"<[^>]+>", "", para)) == "Next measurement: " + want, para
    md = [ln for ln in recommend().splitlines() if ln.startswith("- **next measurement**: ")]
    assert md, md
    text = re.sub(r"\\(.)", r"\1", md[0][len("- **next measurement**: "):])  # the cell escapes
    assert text == want.replace(nm["command"], "`" + nm["command"] + "`"), (text, want)


def test_reordering_characters_escaped_in_the_report_and_rows():
    """A spec file name with U+202E reached the HTML report raw (its escaper knew only HTML's characters and
    controls), and a model name with one reached validate's --rows CSV raw."""
    folder = os.path.join(TMP, "bidi")
    os.makedirs(folder)
    name = os.path.join(folder, "file\u202eevil.json")
    shutil.copy(os.path.join(SRC, "examples", "mlp-synthetic.json"), name)
    report = os.path.join(folder, "r.html")
    recommend("--report", report, spec=name)
    html = open(report, encoding="utf-8").read()
    assert "\u202e" not in html and "file\\u202eevil" in html, [l for l in html.splitlines() if "evil" in l][:3]
    data = os.path.join(SRC, "tests", "data", "search-t4-imagenet.csv")
    renamed = os.path.join(folder, "m.csv")
    with open(data, encoding="utf-8") as f, open(renamed, "w", encoding="utf-8") as g:
        g.write(f.read().replace("imagenet", "imagenet\u202e"))
    rows = os.path.join(folder, "rows.csv")
    p = subprocess.run([BIN, "validate", "-q", "--with-2node-probe", "--params", "imagenet\u202e=25557032", "--rows",
                        rows, renamed], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, p.stderr
    text = open(rows, encoding="utf-8").read()
    assert "\u202e" not in text and "imagenet\\u202e" in text, text[:300]

if __name__ == "__main__":
    rc = pyharness.run(globals())
    for what in dict.fromkeys(SKIPPED):
        print(f"SKIPPED: cmark-gfm is not installed: {what} not rendered (scripts/install-deps.sh)")
    if SKIPPED and os.environ.get("CI") not in (None, "", "0", "false"):
        print("CI: cmark-gfm must be installed here (scripts/install-deps.sh); failing on the skip above")
        rc = rc or 1
    sys.exit(rc)
