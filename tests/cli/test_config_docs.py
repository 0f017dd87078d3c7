#!/usr/bin/python3
"""docs/config.md's examples as written (issue 31): its configuration file
drives recommend, history, prices and profile without an error and with
the effects the page states, and `config show` prints the lines the page
shows. Options that do not apply to a command are ignored with a note
(configuration file and command line), never an error; `-q` silences every
informational line (the stale-catalog warning included); relative ages
(7d, 12h) wherever history takes a date; `history prune --dry-run` deletes
nothing. Usage: test_config_docs.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = pyharness.temp_dir(prefix="cloudfit-config-docs-")
DOC = open(os.path.join(SRC, "docs", "config.md")).read()
SPEC = os.path.join(SRC, "examples", "mlp-synthetic.json")


def doc_config():
    """The configuration file of docs/config.md ("## The file"), verbatim."""
    return re.search(r"## The file\n.*?```json\n(.*?)```", DOC, re.S).group(1)


def home_with(config_text):
    """A HOME whose ~/.config/cloudfit/config.json is `config_text`."""
    home = tempfile.mkdtemp(dir=TMP)
    os.makedirs(os.path.join(home, ".config", "cloudfit"))
    with open(os.path.join(home, ".config", "cloudfit", "config.json"), "w") as f:
        f.write(config_text)
    return home


def run(home, *args, db=None, **extra):
    env = pyharness.clean_env(home, SOURCE_DATE_EPOCH="1795000000")
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("CLOUDFIT_CONFIG", None)
    # The page's file names /srv/cloudfit/history.db; the environment beats the file (as the
    # page says), so the examples run here without writing to /srv.
    env["CLOUDFIT_DB"] = db or os.path.join(home, "history.db")
    env.update({k: str(v) for k, v in extra.items()})
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=env, cwd=SRC, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_the_pages_file_drives_every_command_it_names():
    home = home_with(doc_config())
    conf = json.loads(doc_config())
    # recommend: json (top level), 5 rows (recommend.top), spot allowed, aws and gcp only
    rc, out, err = run(home, "recommend", SPEC)
    assert rc == 0, err
    doc = json.loads(out)
    ranked = [doc["chosen"], *doc["alternatives"]]
    assert len(ranked) == conf["recommend"]["top"], len(ranked)
    assert {c["cloud"] for c in ranked} <= set(conf["cloud"]), {c["cloud"] for c in ranked}
    # a recommendation on another cloud (the command line beats the file) ...
    rc, out, err = run(home, "recommend", "--cloud", "lambda", SPEC)
    assert rc == 0 and json.loads(out)["chosen"]["cloud"] == "lambda", err
    # ... is listed by history: the top-level "cloud" does not filter past rows (exit 0, not 2)
    rc, out, err = run(home, "history")
    assert rc == 0, (rc, err)
    clouds = {row["chosen"]["cloud"] for row in json.loads(out)}
    assert clouds == {"lambda"} | {c["cloud"] for c in ranked[:1]}, clouds
    # a single cloud at the top level does not filter history either
    rc, out, err = run(home_with('{"cloud": "gcp"}'), "history", "-f", "json",
                       db=os.path.join(home, "history.db"))
    assert rc == 0 and len(json.loads(out)) == 2, (rc, out[:300], err)
    # prices: json, only offers with a spot price (prices.spot), aws and gcp
    rc, out, err = run(home, "prices", "T4")
    assert rc == 0, err
    offers = json.loads(out)["offers"]
    assert offers and all(o["spot_usd_per_hour"] for o in offers), offers[:2]
    assert {o["cloud"] for o in offers} <= {"aws", "gcp"}, {o["cloud"] for o in offers}
    # profile.timeout and recommend.max-catalog-age-days, where config show says they came from
    rc, out, err = run(home, "config", "show", "profile")
    assert rc == 0 and re.search(r"--timeout\s+600\s+configuration file \(profile\.timeout\)", out), out
    rc, out, err = run(home, "config", "show", "recommend")
    assert re.search(r"--max-catalog-age-days\s+14\s+configuration file \(recommend\.max-catalog-age-days\)",
                     out), out


def test_config_show_prints_what_the_page_shows():
    block = re.search(r"```\n\$ (CLOUDFIT_DB=\S+) cloudfit (config show [^\n]*)\n(.*?)```", DOC, re.S)
    db, args, shown = block.group(1).split("=", 1)[1], block.group(2).split(), block.group(3)
    home = home_with(doc_config())
    rc, out, err = run(home, *args, db=db)
    assert rc == 0, err
    want = shown.split("  ...")[0].rstrip("\n").splitlines()
    got = out.replace(home, "/home/me").splitlines()[:len(want)]
    assert got == want, "\n".join(f"page: {w}\nhere: {g}" for w, g in zip(want, got) if w != g)


def test_options_that_do_not_apply_are_ignored_with_a_note():
    home = home_with('{"history": {"top": 5, "limit": 1}, "recommend": {"timeout": 600}}')
    rc, out, err = run(home, "recommend", "-q", "--no-history", SPEC)
    assert rc == 0, err  # the note is informational: -q silences it
    rc, out, err = run(home, "recommend", "--no-history", SPEC)
    assert rc == 0 and "recommend.timeout: 'recommend' has no option --timeout; ignored" in err, err
    rc, out, err = run(home, "history")
    assert rc != 2 and "history.top: 'history' has no option --top; ignored" in err, (rc, err)
    # on the command line too: another command's option is a note; a word no command knows an error
    rc, out, err = run(home, "prices", "--top", "3", "--max-price-change", "2", "T4")
    assert rc == 0 and "no option --top; ignored" in err and "--max-price-change applies to 'prices update'" in err, err
    rc, out, err = run(home, "prices", "--topp", "3")
    assert rc == 2 and "unknown option '--topp'" in err, (rc, err)
    rc, out, err = run(home_with('{"topp": 3}'), "prices")
    assert rc == 3 and "topp: unknown key" in err, (rc, err)


def test_quiet_silences_every_informational_line():
    """The embedded catalog is months old here: without -q a warning and a hint, with -q nothing."""
    home = home_with('{"recommend": {"timeout": 600}}')
    rc, out, err = run(home, "recommend", SPEC)
    assert rc == 0 and "days old" in err and "recorded as recommendation" in err, err
    for args in (["recommend", SPEC], ["prices"], ["prices", "T4"], ["history"], ["history", "--top", "2"],
                 ["recommend", "--emit", "torchrun", "--emit-dir", os.path.join(home, "out"), SPEC]):
        rc, out, err = run(home, *args, "-q")
        assert rc == 0 and err == "", (args, rc, err)
        rc, out, err = run(home, args[0], "-q", *args[1:])  # -q before the arguments
        assert rc == 0 and err == "", (args, rc, err)


def test_history_takes_ages_wherever_it_takes_dates_and_prune_has_a_dry_run():
    home = home_with("{}")
    db = os.path.join(home, "h.db")
    for _ in range(3):  # made ten days before "now" (SOURCE_DATE_EPOCH, which the ages count back from)
        assert run(home, "recommend", "-q", SPEC, db=db, SOURCE_DATE_EPOCH=1795000000 - 10 * 86400)[0] == 0
    for args, n in ((["--since", "7d"], 0), (["--since", "14d"], 3), (["--until", "7d"], 3), (["--until", "14d"], 0),
                    (["--since", "2026-11-01", "--until", "12h"], 3), (["--since", "240h"], 3), (["--since", "239h"], 0)):
        rc, out, err = run(home, "history", "-f", "json", *args, db=db)
        assert rc == 0 and len(json.loads(out)) == n, (args, rc, out[:200], err)
    rc, out, err = run(home, "history", "--since", "soon", db=db)
    assert rc == 2 and "--since" in err and "7d" in err, (rc, err)
    count = lambda: sqlite3.connect(db).execute("SELECT count(*) FROM recommendations").fetchone()[0]  # noqa: E731
    rc, out, err = run(home, "history", "prune", "--older-than", "7d", "--dry-run", db=db)
    assert rc == 0 and "dry run: prune would delete 3 recommendations" in out and "nothing was deleted" in out, out
    assert out.count("mlp-synthetic") == 3 and count() == 3, out  # the rows it would delete, all still there
    rc, out, err = run(home, "history", "prune", "--older-than", "7d", db=db)
    assert rc == 0 and "pruned 3 recommendations" in out and count() == 0, out


if __name__ == "__main__":
    sys.exit(pyharness.run(dict(globals())))
