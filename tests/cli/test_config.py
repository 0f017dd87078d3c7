#!/usr/bin/python3
"""The configuration file ($XDG_CONFIG_HOME/cloudfit/config.json) and
`cloudfit config show`: defaults for options, per-command sections, the
precedence command line > environment > file (command section > top level)
> default, and errors that name the file and the key.
Usage: test_config.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
TMP = pyharness.temp_dir(prefix="cloudfit-config-")
XDG = os.path.join(TMP, "cfg")
CONFIG = os.path.join(XDG, "cloudfit", "config.json")
ENV = {k: v for k, v in os.environ.items() if not k.startswith("CLOUDFIT_") and k not in ("NO_COLOR", "CI")}
ENV.update(HOME=TMP, XDG_DATA_HOME=os.path.join(TMP, "data"), XDG_CONFIG_HOME=XDG)
SPEC = os.path.join(SRC, "examples", "resnet50-imagenet.json")


def config(doc):
    os.makedirs(os.path.dirname(CONFIG), exist_ok=True)
    with open(CONFIG, "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))


def run(*args, stdin=None, **env):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=dict(ENV, **env), timeout=60, stdin=stdin)
    return p.returncode, p.stdout, p.stderr


def show(*args, **env):
    """config show as {option: (value, from)}."""
    rc, out, err = run("config", "show", *args, **env)
    assert rc == 0, err
    rows = {}
    for line in out.splitlines():
        m = re.match(r"^  --([a-z0-9-]+)\s+(.*?)\s{2,}(\S.*)$", line) or re.match(r"^  --([a-z0-9-]+) (\S+) (\S.*)$", line)
        if m:
            rows[m.group(1)] = (m.group(2).strip(), m.group(3))
    return out, rows


def test_a_tuning_variable_that_cannot_be_used_is_said():
    """CLOUDFIT_THREADS=16 (above its 8), a negative CLOUDFIT_PROGRESS_INTERVAL_S, a word for a number: each was
    ignored without a word and the default used (docs/config.md "Other environment variables")."""
    spec = os.path.join(SRC, "examples", "mlp-synthetic.json")
    for name, value, want in [("CLOUDFIT_THREADS", "16", "expected a whole number from 1 to 8 threads, got '16'"),
                              ("CLOUDFIT_THREADS", "two", "got 'two'"),
                              ("CLOUDFIT_PROGRESS_INTERVAL_S", "-1", "expected a number from 0 to 86400 seconds"),
                              ("CLOUDFIT_DB_LOCK_TIMEOUT_S", "1e9", "from 0 to 3600 seconds"),
                              ("CLOUDFIT_MAX_INPUT_MIB", "0", "from 1 to 4096 MiB"),
                              # was an error of the CPU engine's alone (exit 3), "1e99" a limit of 1e99 MiB
                              ("CLOUDFIT_CPU_MEMORY_LIMIT_MIB", "1e99", "from 1 to 1048576 MiB, got '1e99'"),
                              ("CLOUDFIT_CPU_MEMORY_LIMIT_MIB", "abc", "got 'abc'")]:
        p = subprocess.run([BIN, "recommend", "--no-history", "-q", spec], capture_output=True, text=True,
                           env=dict(ENV, **{name: value}), timeout=120)
        assert p.returncode == 0 and p.stdout, (name, value, p.stderr)
        assert "warning: %s: " % name in p.stderr and want in p.stderr and "the default is used" in p.stderr, \
            (name, value, p.stderr)
    p = subprocess.run([BIN, "recommend", "--no-history", "-q", spec], capture_output=True, text=True,
                       env=dict(ENV, CLOUDFIT_THREADS="2", CLOUDFIT_PROGRESS_INTERVAL_S="0.5"), timeout=120)
    assert p.returncode == 0 and "CLOUDFIT_" not in p.stderr, p.stderr


def test_defaults_from_the_file_and_the_command_line_wins():
    config({"format": "json", "no-history": True, "recommend": {"top": 3}})
    rc, out, err = run("recommend", SPEC)
    assert rc == 0, err
    doc = json.loads(out)  # format from the file
    assert len(doc["alternatives"]) == 2, len(doc["alternatives"])  # top 3 from the recommend section
    assert not os.path.exists(os.path.join(TMP, "data", "cloudfit", "history.db")), "no-history from the file"
    rc, out, err = run("recommend", SPEC, "--format", "table", "--top", "5")
    assert rc == 0 and out.startswith("resnet50-imagenet:"), out[:200]
    assert len(re.findall(r"^ +[0-9]+ +[a-z]+/", out, flags=re.M)) == 5
    # the top level applies to every command that takes the option
    rc, out, err = run("prices", "A100-40GB")
    assert rc == 0 and out.lstrip().startswith(("{", "[")), out[:200]
    # a flag the file sets is turned off for one run with --FLAG=false (there was no way to undo it)
    rc, out, err = run("recommend", SPEC, "--no-history=false", "-q")
    assert rc == 0 and os.path.exists(os.path.join(TMP, "data", "cloudfit", "history.db")), err
    _, rows = show("recommend", "--no-history=false")
    assert rows["no-history"] == ("false", "command line"), rows["no-history"]
    # a section's false beats the top level's true, and config show says false (it said "(not set)")
    config({"no-history": True, "recommend": {"no-history": False}})
    _, rows = show("recommend")
    assert rows["no-history"] == ("false", "configuration file (recommend.no-history)"), rows["no-history"]
    rc, out, err = run("recommend", SPEC, "--no-history=maybe")
    assert rc == 2 and "option '--no-history' takes no value, or =true or =false; got 'maybe'" in err, err
    # --width on the command line beats the file's "wide" (they are one setting), and --wide its "width"
    config({"wide": True})
    rc, narrow, err = run("prices", "-q", "--width", "60")
    config({})
    rc2, plain, err2 = run("prices", "-q", "--width", "60")
    assert rc == rc2 == 0 and narrow == plain, (err, err2)
    config({"width": 40})
    rc, wide, err = run("prices", "-q", "--wide")
    config({})
    rc2, wide_plain, err2 = run("prices", "-q", "--wide")
    assert rc == rc2 == 0 and wide == wide_plain, (err, err2)
    # config show says so (it said the file's wide was in effect)
    config({"wide": True})
    _, rows = show("prices", "--width", "60")
    assert rows["wide"] == ("false", "default (the file's kept out by --width on the command line)"), rows["wide"]
    # a file's defaults for one subcommand neither break another nor add notes (history prune refused the
    # file's list limit; every history listing noted the file's older-than and to)
    config({"history": {"limit": 50, "older-than": "90d", "to": "copy.db"}, "prices": {"max-price-change": 5}})
    rc, out, err = run("recommend", SPEC, "--no-history=false", "-q")
    assert rc == 0, err
    for args in (["history", "prune", "--older-than", "30d", "--dry-run"], ["history"], ["history", "show", "1"],
                 ["prices", "H100"]):
        rc, out, err = run(*args)
        assert rc == 0 and "note:" not in err, (args, rc, err)
    config({})
    # refused --db values are shown redacted; one from CLOUDFIT_DB is named as such
    for value in ("host=db password=hunter2", "POSTGRESQL://ci:hunter2@h/cf", "postgresql:/ci:hunter2@h/cf"):
        out, rows = show("recommend", "--db", value)
        assert "hunter2" not in out and "***" in rows["db"][0], rows["db"]
    rc, out, err = run("history", CLOUDFIT_DB="host=db password=hunter2")
    assert rc == 2 and "CLOUDFIT_DB: option '--db'" in err and "hunter2" not in err, err


def test_empty_cloudfit_db_is_refused_as_db_empty():
    """An empty CLOUDFIT_DB= was taken as unset: the default history was read and written (exit 0, a
    recommendation stored where the team's variable did not point), while --db '' and a file's "db": "" are
    exit 2. Now the same exit 2 naming the variable, nothing stored; --db on the command line still wins."""
    config({})
    data = os.path.join(TMP, "data-empty-env")
    message = "cloudfit: CLOUDFIT_DB: option '--db' expects a file name or a postgresql:// URL, got ''"
    for args in (["recommend", SPEC, "-q"], ["history"], ["config", "show", "history"]):
        rc, out, err = run(*args, CLOUDFIT_DB="", XDG_DATA_HOME=data)
        assert rc == 2 and message in err and out == "", (args, rc, err)
    assert not os.path.exists(data), os.listdir(data)
    db = os.path.join(TMP, "given.db")
    rc, out, err = run("recommend", SPEC, "-q", "--db", db, CLOUDFIT_DB="", XDG_DATA_HOME=data)
    assert rc == 0 and os.path.exists(db) and not os.path.exists(data), err


def test_config_show_says_where_each_value_came_from():
    config({"format": "json", "db": "/from/config.db", "recommend": {"top": 3, "objective": "time"}})
    out, rows = show("recommend", "--objective", "cost")
    assert "config.json (read)" in out and "command line > environment > configuration file" in out, out
    assert rows["objective"] == ("cost", "command line"), rows["objective"]
    assert rows["top"] == ("3", "configuration file (recommend.top)"), rows["top"]
    assert rows["format"] == ("json", "configuration file (format)"), rows["format"]
    assert rows["db"] == ("/from/config.db", "configuration file (db)"), rows["db"]
    assert rows["max-nodes"][1] == "default" and rows["color"] == ("auto", "default"), rows
    # defaults as the help states them, in every form it uses (a flag's is false; the text stops at ':')
    _, rows = show("validate")
    assert rows["train-max-nodes"] == ("1", "default"), rows["train-max-nodes"]
    _, rows = show("profile")
    assert rows["noise-micro-batches"] == ("8", "default"), rows["noise-micro-batches"]
    _, rows = show("simulate")
    assert rows["gang"] == ("false", "default") and rows["rule"] == ("all", "default"), rows
    _, rows = show("rebalance")
    assert rows["controller"] == ("p", "default"), rows["controller"]
    # the environment beats the file, the command line beats both
    out, rows = show("recommend", CLOUDFIT_DB="/from/env.db")
    assert rows["db"] == ("/from/env.db", "environment (CLOUDFIT_DB)"), rows["db"]
    out, rows = show("recommend", "--db", "/from/cli.db", CLOUDFIT_DB="/from/env.db")
    assert rows["db"] == ("/from/cli.db", "command line"), rows["db"]
    out, rows = show("recommend", NO_COLOR="1")
    assert "NO_COLOR is set: never" in rows["color"][1], rows["color"]
    # CI as colour reads it: CI=false and CI=0 are not CI (colour stays on), CI=true is
    for value in ("false", "0"):
        out, rows = show("recommend", CI=value)
        assert rows["color"] == ("auto", "default"), (value, rows["color"])
    out, rows = show("recommend", CI="true")
    assert "CI is set: never" in rows["color"][1], rows["color"]
    # no command: the top level only
    out, rows = show()
    assert rows["top"][1] == "default" and rows["format"] == ("json", "configuration file (format)"), rows
    os.remove(CONFIG)
    out, rows = show("recommend")
    assert "(not found)" in out and rows["top"] == ("10", "default") and rows["format"] == ("table", "default"), rows


def test_overrides_of_the_spec_search_section_are_not_set():
    """--max-nodes and the other overrides of the spec's search section: the spec decides (docs/config.md), so
    config show says (not set), not the 16 / 64 used only when the spec sets nothing."""
    if os.path.exists(CONFIG):
        os.remove(CONFIG)
    for command in ("recommend", "search"):
        _, rows = show(command)
        for option in ("max-nodes", "max-gpus", "deadline-hours", "budget-usd"):
            assert rows[option] == ("(not set)", "default"), (command, option, rows[option])
    # and --help still says what applies when neither is set
    rc, out, err = run("recommend", "--help")
    assert rc == 0 and re.search(r"search\.max_nodes \(16 when\s+neither is set\)", out), out


def test_config_show_of_the_commands_that_do_not_read_the_file():
    """help, version and completion never read the file (they work whatever it holds): config show says so
    and shows their defaults, not the file's values, even when the file has an error."""
    config({"color": "never", "quiet": True})
    for command in ("help", "version", "completion"):
        out, rows = show(command)
        assert "(the configuration file is not read by this command)" in out, (command, out)
        assert rows["color"] == ("auto", "default") and rows["quiet"] == ("false", "default"), (command, rows)
        out, rows = show(command, "-q")
        assert rows["quiet"] == ("true", "command line"), (command, rows["quiet"])
    config({"nosuch": 1})
    out, rows = show("version")
    assert rows["color"] == ("auto", "default"), rows
    rc, _, err = run("config", "show", "recommend")  # the other commands still read it
    assert rc == 3 and "nosuch" in err, (rc, err)
    os.remove(CONFIG)


def test_config_show_prices_update_shows_what_prices_update_takes():
    """config show prices update listed --spot, --gpu, --format … as in effect (from the command line, even)
    while prices update ignores each with a note: it now shows the form's own options under 'prices update:'
    and says the same notes; the listing form keeps the listing's."""
    rc, out, err = run("config", "show", "prices", "update", "--spot", "--gpu", "T4")
    assert rc == 0, err
    assert "\nprices update:\n" in out, out
    for option in ("spot", "gpu", "format", "price-overrides"):
        assert "--%s " % option not in out, (option, out)
    assert "--max-price-change" in out and "--db" in out, out
    assert "note: --gpu applies to 'prices' only, not 'prices update'; ignored" in err, err
    assert "note: --spot applies to 'prices' only, not 'prices update'; ignored" in err, err
    out, rows = show("prices", "--spot")
    assert "\nprices:\n" in out and rows["spot"] == ("true", "command line"), out
    assert "max-price-change" not in rows, rows


def test_long_configuration_paths():
    """A path of 1,100 bytes is read (it was cut at 1,023 and another path looked up); one over PATH_MAX is an
    error (exit 3), never a shorter path."""
    deep = os.path.join(TMP, "deep")
    while len(deep) < 1100:
        deep = os.path.join(deep, "d" * 50)
    os.makedirs(os.path.join(deep, "cloudfit"))
    with open(os.path.join(deep, "cloudfit", "config.json"), "w") as f:
        json.dump({"history": {"limit": 7}}, f)
    _, rows = show("history", XDG_CONFIG_HOME=deep)
    assert rows["limit"] == ("7", "configuration file (history.limit)"), rows["limit"]
    _, rows = show("history", CLOUDFIT_CONFIG=os.path.join(deep, "cloudfit", "config.json"))
    assert rows["limit"][0] == "7", rows["limit"]
    too_long = "/x" * 3000
    for args in (("config", "show", "history"), ("history", "list")):
        for env in ({"XDG_CONFIG_HOME": too_long}, {"CLOUDFIT_CONFIG": too_long + "/config.json"}):
            rc, out, err = run(*args, **env)
            assert rc == 3 and "configuration file path too long" in err, (args, rc, err[:300])
    # a command that reads no configuration file is not stopped by its path, nor is its config show
    for args in (("config", "show", "help"), ("help",), ("version",)):
        rc, out, err = run(*args, CLOUDFIT_CONFIG=too_long + "/config.json")
        assert rc == 0, (args, rc, err[:300])


def test_bad_files_name_the_file_and_the_key():
    cases = [
        ({"colour": "never"}, "colour: unknown key"),
        ({"recommend": {"topp": 3}}, "recommend.topp: unknown key"),
        ({"top": "5"}, "top: expected a positive integer, written as a JSON number"),
        ({"deadline-hours": "-1"}, "deadline-hours: expected a positive number, written as a JSON number"),
        ({"no-history": "yes"}, "no-history: expected true or false"),
        ({"cloud": [1]}, "cloud: expected a string or a list"),
        ({"note": "x"}, "note: --note describes one run"),
        ({"recommend": 3}, "recommend: expected an object"),
    ]
    for doc, want in cases:
        config(doc)
        rc, out, err = run("recommend", SPEC, "--no-history")
        assert rc == 3 and CONFIG in err and want in err, (doc, rc, err)
        rc, out, err = run("config", "show")
        assert rc == 3 and want in err, (doc, err)
    # another command's option in a section is not an error: ignored, with a note when it runs
    # (tests/cli/test_config_docs.py)
    config({"history": {"top": 3}})
    rc, out, err = run("recommend", SPEC, "--no-history")
    assert rc == 0 and "history.top" not in err, (rc, err)
    config('{"top": 3,\n "format": }')
    rc, out, err = run("recommend", SPEC)
    assert rc == 3 and CONFIG + ":2:" in err and "invalid JSON" in err, err
    config('{"top": 3, "top": 4}')
    rc, out, err = run("recommend", SPEC)
    assert rc == 3 and "duplicate key" in err, err
    # an empty file and trailing text: hints about a JSON document, not a job spec
    for text, hint in (("", "it should hold one JSON object"), ('{"top": 3} x', "remove what follows it")):
        config(text)
        rc, out, err = run("recommend", SPEC, "--no-history")
        assert rc == 3 and hint in err and "job spec" not in err, (text, err)
    # any number of items in a list, as on the command line (16 at most was an undocumented limit)
    regions = ["us-east-1", "us-east-2", "us-west-1", "us-west-2", "eu-west-1", "eu-west-2", "eu-west-3",
               "eu-central-1", "eu-north-1", "ap-south-1", "ap-northeast-1", "ap-northeast-2", "ap-southeast-1",
               "ap-southeast-2", "ca-central-1", "eu-south-1", "me-south-1"]
    config({"prefer-region": regions})
    rc, out, err = run("recommend", SPEC, "--no-history", "-q")
    assert rc == 0, err
    os.remove(CONFIG)
    rc, out, err = run("recommend", SPEC, "--no-history", CLOUDFIT_CONFIG=os.path.join(TMP, "missing.json"))
    assert rc == 3 and "missing.json" in err, err
    # a directory is named as the configuration file, with where the name came from (it said only
    # "cannot read 'd': Is a directory"); /dev/null reads none
    folder = os.path.join(TMP, "config-folder")
    os.makedirs(folder, exist_ok=True)
    rc, out, err = run("recommend", SPEC, "--no-history", CLOUDFIT_CONFIG=folder)
    assert rc == 3 and "configuration file" in err and "(CLOUDFIT_CONFIG): it is a directory" in err, err
    assert "hint: point CLOUDFIT_CONFIG at a JSON file" in err, err
    rc, out, err = run("recommend", SPEC, "--no-history", "-q", CLOUDFIT_CONFIG="/dev/null")
    assert rc == 0 and err == "", err
    # at the default place too, only a file that is not there is no file: a symlink loop was "(not found)",
    # exit 0, and every default it held silently dropped
    os.makedirs(os.path.dirname(CONFIG), exist_ok=True)
    os.symlink("config.json", CONFIG)
    try:
        for args in (("recommend", SPEC, "--no-history"), ("config", "show", "recommend")):
            rc, out, err = run(*args)
            assert rc == 3 and CONFIG in err and "Too many levels of symbolic links" in err, (args, rc, out[:200], err)
    finally:
        os.remove(CONFIG)


def test_values_are_checked_like_the_command_line():
    config({"recommend": {"objective": "cheapest"}})
    rc, out, err = run("recommend", SPEC, "--no-history")
    assert rc == 2 and "cheapest" in err, (rc, err)
    # ... and the error names the file and the key, not only the option (the value was never typed)
    for doc, args, key in (({"recommend": {"objective": "cheapest"}}, ["recommend", SPEC, "--no-history"],
                            "recommend.objective"),
                           ({"history": {"since": "7x"}}, ["history"], "history.since"),
                           ({"format": "yaml"}, ["history"], "format"),
                           # a count above its range is the command line's error, with the range (it was
                           # "top: expected a positive integer", exit 3, for 2000000)
                           ({"recommend": {"top": 2000000}}, ["recommend", SPEC, "--no-history"], "recommend.top"),
                           ({"limit": 10 ** 20}, ["history"], "limit"),
                           ({"color": "sometimes"}, ["history"], "color")):
        config(doc)
        rc, out, err = run(*args)
        assert rc == 2 and err.startswith("cloudfit: %s: %s: option '--" % (CONFIG, key)) and "hint:" in err, \
            (doc, rc, err)
        assert "expected a positive integer" not in err and ("top" not in key or "(1 to 1000000)" in err), err
    # a number of the right JSON type but outside its option's range is the command line's error, whichever
    # side of the range: "timeout": 0, "top": 0, "deadline-hours": -1 were "expected a positive number", exit 3,
    # with no range, where 0.5, 2000000 and --timeout 0 said the range, exit 2; "top": 2.5 is not stored as 2,
    # and 100000 is quoted as written ("1e+05")
    for doc, cmd, key, value in (({"profile": {"timeout": 0}}, "profile", "profile.timeout", "0"),
                                 ({"profile": {"timeout": -5}}, "profile", "profile.timeout", "-5"),
                                 ({"profile": {"timeout": 100000}}, "profile", "profile.timeout", "100000"),
                                 ({"recommend": {"top": 0}}, "recommend", "recommend.top", "0"),
                                 ({"recommend": {"top": 2.5}}, "recommend", "recommend.top", "2.5"),
                                 ({"deadline-hours": -1}, "recommend", "deadline-hours", "-1"),
                                 ({"search": {"probe-startup-s": -1}}, "search", "search.probe-startup-s", "-1"),
                                 ({"history": {"limit": 0}}, "history", "history.limit", "0")):
        option = key.split(".")[-1]
        rc, out, cli_err = run(cmd, "--" + option, value, *([] if cmd == "history" else [SPEC]),
                               CLOUDFIT_CONFIG="/dev/null")
        assert rc == 2 and cli_err.startswith("cloudfit: option '--%s' expects " % option), (cmd, option, rc, cli_err)
        config(doc)
        for args in ([cmd, *([] if cmd == "history" else [SPEC])], ["config", "show", cmd]):
            rc, out, err = run(*args)
            assert rc == 2 and err.splitlines()[0] == "cloudfit: %s: %s: %s" % (
                CONFIG, key, cli_err.splitlines()[0][len("cloudfit: "):]), (doc, args, rc, err, cli_err)
    # config show checks them as the command does (it showed "cheapest" as the effective value, exit 0);
    # the top level alone shows one key for commands with different sets ("format": "csv" is history's)
    for doc, args, key in (({"recommend": {"objective": "cheapest"}}, ["recommend"], "recommend.objective"),
                           ({"cloud": ["aws", "oracle"]}, ["recommend"], "cloud"),
                           ({"format": "csv"}, ["search"], "format")):
        config(doc)
        rc, out, err = run("config", "show", *args)
        assert rc == 2 and err.startswith("cloudfit: %s: %s: option '--" % (CONFIG, key)) and out == "", \
            (doc, rc, out[:200], err)
    config({"format": "csv", "history": {"cloud": "oracle"}})
    for args in ([], ["history"], ["prices"]):
        assert show(*args)[0], args
    # ... also where the message names the option as a word, not as "option '--NAME'" (it said only
    # "--fit goes with --calibrate DIR", an option never typed)
    trace = os.path.join(SRC, "examples", "spot-traces", "availability_16node_08-27-2023_us-east-2b_V100x1.csv")
    for doc, key in (({"simulate": {"fit": "somedir"}}, "simulate.fit"), ({"simulate": {"nodes": 3}}, "simulate.nodes")):
        config(doc)
        rc, out, err = run("simulate", SPEC, "--trace", trace, "--trace", trace)
        assert rc == 2 and err.startswith("cloudfit: %s: %s: --%s " % (CONFIG, key, key.split(".")[1])), (doc, rc, err)
    # ... and only the option as a whole word, never an error about something else
    config({"cloud": "aws", "fit": "somedir"})
    rc, out, err = run("prices", "update", "extra")
    assert rc == 2 and err.startswith("cloudfit: 'prices update' takes no arguments"), err
    rc, out, err = run("simulate", SPEC, "--trace", trace, "--fit", "d")
    assert rc == 2 and err.startswith("cloudfit: --fit goes with"), err
    # the same value typed on the command line is reported as the option alone
    os.remove(CONFIG)
    rc, out, err = run("history", "--since", "7x")
    assert rc == 2 and err.startswith("cloudfit: option '--since'"), err


def test_config_show_refuses_what_the_command_refuses():
    """config show COMMAND showed a value of the file that COMMAND then refused, exit 0, when the value is
    not one of a fixed set but has a rule of its own (a probability, a percentage, a date, a label selector,
    a name): "confidence": "1.5", "since": "yesterday". It is now checked as it is read, by the same parser
    for both, and config show says what COMMAND says: exit 2, the file, the key and what was expected."""
    trace = "trace:" + os.path.join(SRC, "examples", "data", "resnet18-cifar10-t4-profile.csv")
    rebalance = ["--global-batch", "256", "--workers", "2"]
    for section, key, value, command, expects in (
            ("recommend", "confidence", "1.5", [SPEC, "--no-history"], "expects a probability from 0.5 to 0.999"),
            ("recommend", "max-cost-increase", "lots", [SPEC, "--no-history"], "expects a percentage (10%)"),
            ("recommend", "node-selector", "nokv", [SPEC, "--no-history"], "is not a Kubernetes label selector"),
            ("recommend", "entrypoint", "a; b", [SPEC, "--no-history"], "--entrypoint"),
            ("recommend", "gpu", "", [SPEC, "--no-history"], "expects a name, got ''"),
            ("recommend", "region", ["us-east-1", ""], [SPEC, "--no-history"], "expects a name, got ''"),
            ("search", "margin", "abc", [SPEC, "--no-history", "--runner", trace],
             "expects a fraction below 1 or a percentage below 100% (e.g. 3% or 0.03), got 'abc'"),
            # 200% is a percentage: the message says the range ("expects a fraction or a percentage" did not),
            # and config show refuses it as search and profile do (it showed it, and only search checked it)
            ("search", "trace-noise", "200%", [SPEC, "--no-history", "--runner", trace],
             "expects a fraction below 1 or a percentage below 100% (e.g. 2% or 0.02), got '200%'"),
            ("profile", "trace-noise", "1.5", [SPEC, "--runner", trace, "--gpu", "T4"],
             "expects a fraction below 1 or a percentage below 100% (e.g. 2% or 0.02), got '1.5'"),
            ("search", "safety-sds", "9", [SPEC, "--no-history", "--runner", trace], "expects a number from 0 to 5"),
            # a number as written in the file: "%.17g" said "got '0.69999999999999996'"
            ("search", "timeout", 0.7, [SPEC, "--no-history", "--runner", trace],
             "expects seconds from 1 to 86400 (a day), got '0.7'\n"),
            ("profile", "trace-nic-gbps", 1e300, [SPEC, "--runner", trace, "--gpu", "T4"],
             "expects Gbit/s from 0.1 to 1000000, got '1e+300'\n"),
            ("simulate", "instance-type", "", [SPEC], "expects a name, got ''"),
            ("history", "since", "yesterday", [], "is not a date or time"),
            ("history", "older-than", "soon", ["prune"], "is not a date or time"),
            ("rebalance", "dead-band", "x", rebalance, "expects a percentage below 100%"),
            ("rebalance", "min-share", "150%", rebalance, "expects a percentage below 100%")):
        config({section: {key: value}})
        want = "cloudfit: %s: %s.%s: option '--%s'" % (CONFIG, section, key, key)
        rc, out, err = run(section, *command, stdin=subprocess.DEVNULL)
        assert rc == 2 and err.startswith(want) and expects in err, (section, key, value, rc, err)
        rc, out, err = run("config", "show", section)
        assert rc == 2 and out == "" and err.startswith(want) and expects in err, (section, key, value, rc, out, err)
        # the top level goes to the command as its section does
        config({key: value})
        rc, out, err = run("config", "show", section)
        assert rc == 2 and out == "" and err.startswith("cloudfit: %s: %s: option '--%s'" % (CONFIG, key, key)), \
            (key, value, rc, err)
    # an empty name is refused by every command that takes the option, not only recommend, search and
    # simulate: config show history/prices/profile showed "(not set)" from the file, exit 0, that the
    # command refused, and profile --instance-type '' was looked up as a VM (exit 3)
    for section, key, command in (("history", "gpu", []), ("prices", "gpu", []), ("prices", "region", []),
                                  ("profile", "gpu", [SPEC, "--runner", trace]),
                                  ("profile", "region", [SPEC, "--runner", trace, "--gpu", "T4"]),
                                  ("profile", "instance-type", [SPEC, "--runner", trace, "--gpu", "T4"])):
        config({section: {key: ""}})
        want = "cloudfit: %s: %s.%s: option '--%s' expects a name, got ''" % (CONFIG, section, key, key)
        rc, out, err = run(section, *command, stdin=subprocess.DEVNULL)
        assert rc == 2 and err.startswith(want), (section, key, rc, err)
        rc, out, err = run("config", "show", section)
        assert rc == 2 and out == "" and err.startswith(want), (section, key, rc, out, err)
    config({})
    rc, out, err = run("profile", SPEC, "--runner", trace, "--gpu", "T4", "--instance-type", "")
    assert rc == 2 and err.startswith("cloudfit: option '--instance-type' expects a name, got ''"), (rc, err)
    # the values the commands take are shown
    config({"recommend": {"confidence": "95%", "max-cost-increase": "$25", "node-selector": "a.b/c=d"},
            "history": {"since": "7d", "until": "2026-01-02"}, "rebalance": {"dead-band": "5%"}})
    assert show("recommend")[1]["confidence"] == ("95%", "configuration file (recommend.confidence)")
    assert show("history")[1]["since"] == ("7d", "configuration file (history.since)")
    assert show("rebalance")[1]["dead-band"] == ("5%", "configuration file (rebalance.dead-band)")
    config({})


def test_an_error_about_a_value_never_typed_says_where_it_came_from():
    """An error about a database path from CLOUDFIT_DB or the configuration file said only "cannot open
    '/nonexistent/x.db'": nothing told the user the path was not on the command line. A hint names the
    variable, or the file and the key (a password never shown); typed on the command line, no such hint."""
    missing = os.path.join(TMP, "no-such-folder", "h.db")
    config({})
    for args in (["history"], ["history", "show", "1"], ["recommend", SPEC]):
        rc, out, err = run(*args, CLOUDFIT_DB=missing)
        # exit 3 (no history to read) or, for recommend, 1 (the history could not be written)
        assert rc == (1 if args[0] == "recommend" else 3) and "'%s'" % missing in err and \
            "hint: '%s' is --db from the environment variable CLOUDFIT_DB" % missing in err, (args, rc, err)
        rc, out, err = run(*args, "--db", missing, CLOUDFIT_DB=missing)
        assert rc == (1 if args[0] == "recommend" else 3) and "is --db from" not in err, (args, rc, err)
    config({"history": {"db": missing}})
    rc, out, err = run("history")
    assert rc == 3 and "hint: '%s' is --db from the configuration file, %s: history.db" % (missing, CONFIG) in err, err
    config({"db": "postgresql://u:secret@127.0.0.1:1/x"})
    rc, out, err = run("history")
    assert rc == 1 and "secret" not in err and \
        "hint: 'postgresql://u:***@127.0.0.1:1/x' is --db from the configuration file, %s: db" % CONFIG in err, err
    config({})


def test_config_show_columns_are_aligned():
    """An option name longer than 22 characters (--include-restricted-regions) or a value longer than 36 (a
    long --db path) pushed the rest of its line out of the columns. Each column is now as wide as its widest
    cell, for config show alone and for every command."""
    config({"recommend": {"entrypoint": "python train.py --epochs 90 --lr 0.1 --data /datasets/imagenet"}})
    long_db = os.path.join(TMP, "a", "rather", "long", "path", "to", "the", "history", "database.db")
    commands = ["recommend", "history", "prices", "profile", "search", "validate", "simulate", "rebalance", "record",
                "help", "version", "completion"]
    for args in [[]] + [[c] for c in commands]:
        rc, out, err = run("config", "show", *args, CLOUDFIT_DB=long_db)
        assert rc == 0, (args, err)
        lines = [line for line in out.splitlines() if line.startswith("  ")]
        header, rows = lines[0], lines[1:]
        value_at, from_at = header.index("VALUE"), header.index("FROM")
        assert rows and all(line.startswith("  --") for line in rows), (args, out)
        for line in rows:
            assert line[value_at - 1] == " " and line[value_at] != " ", (args, line)
            assert line[from_at - 1] == " " and line[from_at] != " ", (args, line)
    config({})


def test_a_top_level_filter_is_not_another_commands_option_of_that_name():
    """A top-level "gpu"/"cloud"/"region" filters where recommend and search run and what prices lists; simulate's options
    of those names are the VM its trace was recorded on (a V100 trace was replayed on H100 VMs, and the
    example file of docs/config.md, "cloud": ["aws", "gcp"], stopped every simulate), profile's --gpu the
    GPU a --runner measures: they take defaults from their own section only."""
    trace = os.path.join(SRC, "examples", "spot-traces", "availability_16node_08-27-2023_us-east-2b_V100x1.csv")
    config({"gpu": "H100", "cloud": ["aws", "gcp"], "region": ["us-east-2", "us-west-2"]})
    rc, out, err = run("simulate", SPEC, "--trace", trace, "-q")
    assert rc == 0 and "p3.2xlarge" in out and "V100" in out and "H100" not in out, (rc, out[:400], err)
    for command in ("simulate", "profile", "history"):
        _, rows = show(command)
        assert rows["gpu"] == ("(not set)", "default"), (command, rows["gpu"])
    for command in ("recommend", "search", "prices"):
        _, rows = show(command)
        assert rows["gpu"] == ("H100", "configuration file (gpu)"), (command, rows["gpu"])
        assert rows["cloud"] == ("aws,gcp", "configuration file (cloud)"), (command, rows["cloud"])
    # prices shows H100's offers, as 'prices H100' (it had no --gpu: the whole summary)
    rc, out, err = run("prices", "-q", "-f", "json")
    assert rc == 0 and {o["gpu"] for o in json.loads(out)["offers"]} == {"H100"}, (rc, out[:300], err)
    # the command's own section still sets them
    config({"gpu": "H100", "simulate": {"gpu": "H100"}})
    _, rows = show("simulate")
    assert rows["gpu"] == ("H100", "configuration file (simulate.gpu)"), rows["gpu"]
    rc, out, err = run("simulate", SPEC, "--trace", trace, "-q")
    assert rc == 0 and "H100" in out, (rc, out[:400], err)


def test_a_sections_width_keeps_the_top_levels_wide_out():
    """--width and --wide are one setting, and the command's section comes first: a top-level "wide": true
    beat {"prices": {"width": 60}} (the table came 400 columns wide), and config show said both applied."""
    config({})
    rc, narrow, err = run("prices", "H100", "-q", "--width", "60")
    assert rc == 0, err
    for doc, kept_out in (({"wide": True, "prices": {"width": 60}}, "wide"),
                          ({"width": 200, "prices": {"width": 60}}, None)):
        config(doc)
        rc, out, err = run("prices", "H100", "-q")
        assert rc == 0 and out == narrow, (doc, err, max(len(line) for line in out.splitlines()))
        _, rows = show("prices")
        assert rows["width"] == ("60", "configuration file (prices.width)"), rows["width"]
        if kept_out:
            assert rows[kept_out] == ("false", "default (the file's kept out by prices.width)"), rows[kept_out]
    # a section's "wide": true keeps the top level's width out; its "wide": false sets nothing
    config({"width": 60, "history": {"wide": True}, "prices": {"wide": False}})
    _, rows = show("history")
    assert rows["width"][1] == "default (the file's kept out by history.wide)", rows["width"]
    rc, out, err = run("prices", "H100", "-q")
    assert rc == 0 and out == narrow, err
    config({})


def test_config_usage():
    rc, out, err = run("config")
    assert rc == 2 and "usage: cloudfit config show" in err
    rc, out, err = run("config", "show", "nosuch")
    assert rc == 2 and "'nosuch' is not a cloudfit command" in err
    rc, out, err = run("config", "show", "recommend", "--nosuch")
    assert rc == 2 and "--nosuch" in err
    rc, out, err = run("config", "--help")
    assert rc == 0 and "config show" in out


if __name__ == "__main__":
    sys.exit(pyharness.run(dict(globals())))
