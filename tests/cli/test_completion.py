#!/usr/bin/python3
"""`cloudfit completion bash|zsh`: the bash script loaded in bash completes
commands, a command's options (exactly those its --help lists), option
values and subcommands, and words from the data: the ids stored in the
history database (history show/diff, record; --db on the line honoured),
the GPU models of the catalog in use (--gpu, prices GPU), the command
sections after `config show`, then that command's options and values; after
a history subcommand, and after prices [GPU] or prices update, only the
options it takes (what the parser accepts there); the zsh script parses (zsh -n) and names every command and option. Usage: test_completion.py CLOUDFIT_BINARY SOURCE_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), sys.argv[2]
TMP = tempfile.mkdtemp(prefix="cloudfit-completion-")
BINDIR = os.path.join(TMP, "bin")  # `cloudfit` on PATH, as a user has it: the script calls it for data
os.makedirs(BINDIR)
os.symlink(BIN, os.path.join(BINDIR, "cloudfit"))
ENV = dict(os.environ, HOME=TMP, XDG_CONFIG_HOME=os.path.join(TMP, "cfg"), XDG_DATA_HOME=os.path.join(TMP, "xdg"),
           PATH=BINDIR + os.pathsep + os.environ["PATH"])
ENV.pop("CLOUDFIT_DB", None)
SKIPPED = []


def cloudfit(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=ENV, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


BASH = os.path.join(TMP, "cloudfit.bash")
with open(BASH, "w") as f:
    f.write(cloudfit("completion", "bash"))


def complete(line, cwd=TMP):
    """COMPREPLY for the command line typed so far (a trailing space starts a new word), in folder `cwd`."""
    words = line.split()
    if line.endswith(" "):
        words.append("")
    script = ("source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_cloudfit\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n"
              % (BASH, " ".join("'%s'" % w for w in words), len(words) - 1))
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, cwd=cwd,
                       timeout=30, env=ENV)
    assert p.returncode == 0, p.stderr
    return sorted(x for x in p.stdout.split("\n") if x)


def commands():
    return re.findall(r"^  ([a-z]+) ", cloudfit("--help"), flags=re.M)


def options_of(command):
    """The options `cloudfit COMMAND --help` lists."""
    return set(re.findall(r"^\s+(?:-\w, )?--([a-z0-9-]+)", cloudfit(command, "--help"), flags=re.M))


def test_bash_completes_commands():
    assert complete("cloudfit reco") == ["recommend", "record"]
    assert complete("cloudfit comp") == ["completion"]
    assert complete("cloudfit pr") == ["prices", "profile"]
    got = complete("cloudfit ")
    assert set(commands()) <= set(got) and "completion" in got and "config" in got, got


def test_bash_completes_every_option_of_a_command_and_nothing_else():
    for command in commands():
        if command == "config":
            continue
        got = {w[2:] for w in complete(f"cloudfit {command} --") if w.startswith("--")}
        if command == "prices":  # prices alone is the listing: update's options after 'prices update'
            got |= {w[2:] for w in complete("cloudfit prices update --") if w.startswith("--")}
        want = options_of(command)
        assert got == want, (command, got ^ want)
    assert complete("cloudfit recommend --rep") == ["--report"]
    assert complete("cloudfit recommend --no-") == ["--no-chart", "--no-history"]


def test_bash_completes_values_and_subcommands():
    assert complete("cloudfit recommend --objective ") == ["balanced", "cost", "time"]
    assert complete("cloudfit recommend -f ") == ["json", "markdown", "table"]
    assert complete("cloudfit history -f c") == ["csv"]
    assert complete("cloudfit recommend --spot o") == ["only"]
    # fixed values of every command that takes the option (search --spot, simulate's, rebalance's offered none)
    assert complete("cloudfit search --spot ") == ["allow", "never", "only"]
    assert complete("cloudfit simulate --rule s") == ["sqrt"]
    assert complete("cloudfit simulate --batch ") == ["both", "hold", "shrink"]
    assert complete("cloudfit rebalance --controller ") == ["p", "pi"]
    # --opt=VALUE, which bash splits into --opt, =, VALUE: values offered, and the value is not a positional
    assert complete("cloudfit recommend --format =") == ["json", "markdown", "table"]
    assert complete("cloudfit recommend --format = j") == ["json"]
    assert complete("cloudfit history --format = json sh") == ["show"]
    # a flag's =true/=false, and --db=PATH honoured for the ids (it read a database named '=')
    assert complete("cloudfit recommend --wide =") == ["false", "true"]
    assert complete("cloudfit recommend --wide ") != ["false", "true"]
    assert complete("cloudfit history ") == ["diff", "list", "migrate", "prune", "show"]
    assert complete("cloudfit completion ") == ["bash", "zsh"]
    assert "recommend" in complete("cloudfit help ")
    # prices --spot is a flag there: the next word is a subcommand, not a value
    assert complete("cloudfit prices --spot u") == ["update"]
    # a number: nothing to offer; a file: the files here
    open(os.path.join(TMP, "model.json"), "w").close()
    assert complete("cloudfit recommend --top ") == []
    assert "model.json" in complete("cloudfit recommend --report ")
    assert "model.json" in complete("cloudfit recommend mo")


def test_bash_file_names_are_neither_split_nor_expanded():
    """A name with a space is one candidate, and a file named '*' is offered as itself, not as every file."""
    folder = os.path.join(TMP, "names")
    os.makedirs(folder)
    for name in ("my model.json", "*", "plain.json"):
        open(os.path.join(folder, name), "w").close()
    expected = ["*", "my model.json", "plain.json"]
    assert complete("cloudfit recommend --plot ", cwd=folder) == expected
    assert complete("cloudfit recommend ", cwd=folder) == expected  # a positional: words (none) + files
    assert complete("cloudfit recommend my", cwd=folder) == ["my model.json"]
    assert complete("cloudfit recommend --plot my", cwd=folder) == ["my model.json"]


def test_bash_completes_words_from_the_data():
    """Ids from the history database, GPUs from the catalog, sections and keys for config show."""
    assert complete("cloudfit history show ") == []  # no database yet: nothing, and no error text
    spec = os.path.join(SRC, "examples", "mlp-synthetic.json")
    for _ in range(3):
        cloudfit("recommend", "-q", spec)
    assert complete("cloudfit history show ") == ["1", "2", "3"]
    assert complete("cloudfit history diff 3 ") == ["1", "2", "3"]
    assert complete("cloudfit history show 2 ") == []  # show takes one id
    assert complete("cloudfit history ") == ["diff", "list", "migrate", "prune", "show"]
    assert complete("cloudfit history -f json show ") == ["1", "2", "3"]  # options before it are skipped
    assert complete("cloudfit record ") == ["1", "2", "3"]
    other = os.path.join(TMP, "other.db")
    cloudfit("recommend", "-q", "--db", other, spec)
    assert complete(f"cloudfit history --db {other} show ") == ["1"], "the --db on the line"
    assert complete(f"cloudfit history --db = {other} show ") == ["1"], "--db=PATH on the line"
    # GPU models: every model the catalog in use has an offer for (what `prices` lists)
    listed = sorted({row["gpu"] for row in json.loads(cloudfit("prices", "-q", "-f", "json"))["gpus"]})
    assert complete("cloudfit recommend --gpu ") == listed, (complete("cloudfit recommend --gpu "), listed)
    assert complete("cloudfit history --gpu H1") == [g for g in listed if g.startswith("H1")]
    assert complete("cloudfit prices A10") == [g for g in listed if g.startswith("A10")]
    assert "update" in complete("cloudfit prices ")
    # config show: the sections (commands), then that command's keys
    assert complete("cloudfit config ") == ["show"]
    assert complete("cloudfit config show re") == ["rebalance", "recommend", "record"]
    # every command but config, which config show refuses
    assert complete("cloudfit config show ") == sorted(c for c in commands() if c != "config")
    assert complete("cloudfit config show co") == ["completion"]
    assert "config:" not in cloudfit("completion", "words", "commands")
    assert complete("cloudfit config show recommend --to") == ["--top"]
    assert complete("cloudfit config show history --si") == ["--since"]
    assert complete("cloudfit config show history --top") == []  # history has no --top (--to is migrate's)


def test_bash_offers_what_the_subcommand_takes():
    """After 'history prune' TAB offered every history option, the list filters that prune refuses (exit 2) among
    them, and --to, migrate's; after 'config show recommend --format ' (or --gpu) it offered nothing. One table
    (cf_history_option_subcommands) says which subcommand takes which option, for the parser and completion;
    config show COMMAND completes the rest of the line as COMMAND's."""
    every = {w for w in complete("cloudfit history --") if w.startswith("--")}
    assert {"--model", "--limit", "--since", "--to", "--older-than", "--dry-run"} <= every, every  # none named yet
    prune = set(complete("cloudfit history prune --"))
    assert {"--older-than", "--dry-run", "--db"} <= prune, prune
    # prune prints text: -f json there is noted as ignored (it printed the text without a word)
    assert not prune & {"--model", "--limit", "--since", "--until", "--gpu", "--cloud", "--to", "--format"}, prune
    assert set(complete("cloudfit history -f json prune --")) == prune  # an option before the subcommand
    listed = set(complete("cloudfit history list --"))
    assert {"--model", "--limit", "--since"} <= listed and not listed & {"--to", "--older-than", "--dry-run"}
    assert complete("cloudfit history migrate --t") == ["--to"]
    assert complete("cloudfit history show --li") == []
    # what completion offers after a subcommand, the parser takes there without a note; what it leaves out,
    # the parser refuses (prune) or notes as ignored
    db = os.path.join(TMP, "sub-options.db")
    for sub, extra in (("prune", ["--older-than", "30d"]), ("list", []), ("migrate", ["--to", db + ".copy"])):
        offered = {w for w in complete(f"cloudfit history {sub} --") if w.startswith("--")}
        for option in sorted(options_of("history")):
            value = {"older-than": "30d", "to": db + ".x", "limit": "1", "width": "80", "format": "json",
                     "color": "never", "db": db, "since": "7d", "until": "7d",
                     "spec-hash": "ab"}.get(option, "x")
            flag = option in ("dry-run", "wide", "quiet", "help")
            if option in ("help", "older-than", "to", "db"):
                continue
            args = ["history", "--db", db, sub, *extra, "--" + option, *([] if flag else [value])]
            p = subprocess.run([BIN, *args], capture_output=True, text=True, env=ENV, timeout=60)
            accepted = p.returncode != 2 and "ignored" not in p.stderr
            assert accepted == ("--" + option in offered), (sub, option, p.returncode, p.stderr)
    # config show COMMAND: its options and their values
    assert complete("cloudfit config show recommend --format ") == ["json", "markdown", "table"]
    assert complete("cloudfit config show recommend --format = m") == ["markdown"]
    assert complete("cloudfit config show history -f ") == ["csv", "json", "table"]
    assert complete("cloudfit config show recommend --objective ") == ["balanced", "cost", "time"]
    gpus = complete("cloudfit recommend --gpu ")
    assert gpus and complete("cloudfit config show recommend --gpu ") == gpus
    assert complete("cloudfit config show recommend --top 5 --fo") == ["--format"]
    assert complete("cloudfit config show prices --sp") == ["--spot"]


def test_bash_offers_what_the_prices_form_takes():
    """After 'prices' (or 'prices GPU') TAB offered --max-price-change, update's, and after 'prices update' the
    listing's --gpu, --spot, --format, ...: the parser notes them as ignored there (update said nothing of most).
    One table (cf_prices_option_subcommands) says which form takes which option, for the parser and completion."""
    listing = set(complete("cloudfit prices --"))
    assert {"--gpu", "--spot", "--format", "--cloud", "--region"} <= listing, listing
    assert "--max-price-change" not in listing, listing
    assert set(complete("cloudfit prices T4 --")) == listing
    assert set(complete("cloudfit prices --cloud aws T4 --")) == listing  # an option before the argument
    update = set(complete("cloudfit prices update --"))
    assert {"--max-price-change", "--cloud", "--region", "--db"} <= update, update
    assert not update & {"--gpu", "--spot", "--format", "--width", "--price-overrides"}, update
    assert set(complete("cloudfit prices --cloud lambda update --")) == update
    assert complete("cloudfit prices update --max") == ["--max-catalog-age-days", "--max-price-change"]
    assert complete("cloudfit prices --max") == ["--max-catalog-age-days"]
    assert complete("cloudfit prices update --g") == []
    assert "--max-price-change" in complete("cloudfit config show prices --")  # every key of the section
    # what completion offers after a form, the parser takes there without a note; what it leaves out, it notes
    # as ignored (update: lambda without an API key fails after the notes, offline)
    db = os.path.join(TMP, "prices-options.db")
    overrides = os.path.join(TMP, "overrides.json")
    with open(overrides, "w") as f:
        f.write('{"discounts": [{"cloud": "aws", "percent": 10}]}')
    env = dict(ENV)
    env.pop("CLOUDFIT_LAMBDA_API_KEY", None)
    for form, line in ((["T4"], "prices T4 --"), ([], "prices --"), (["update", "--cloud", "lambda"], "prices update --")):
        offered = {w for w in complete("cloudfit " + line) if w.startswith("--")}
        for option in sorted(options_of("prices") - {"help", "db"}):
            value = {"gpu": "T4", "cloud": "lambda", "region": "us-east-1", "prefer-region": "us-east-1",
                     "format": "json", "width": "80", "color": "never", "max-catalog-age-days": "30",
                     "price-overrides": overrides, "max-price-change": "2"}.get(option)
            args = ["prices", "--db", db, *form, "--" + option, *([] if value is None else [value])]
            p = subprocess.run([BIN, *args], capture_output=True, text=True, env=env, timeout=60)
            accepted = p.returncode != 2 and "ignored" not in p.stderr
            assert accepted == ("--" + option in offered), (form, option, p.returncode, p.stderr)


def test_zsh_script():
    text = cloudfit("completion", "zsh")
    assert text.startswith("#compdef cloudfit\n")
    for command in commands():
        assert f"\n  ({command})\n" in text, command
    assert "--max-cost-increase=[" in text and "(cost time balanced)" in text  # "=": the value after = too
    zsh = shutil.which("zsh")
    if not zsh:
        SKIPPED.append("zsh is not installed (scripts/install-deps.sh installs it): the zsh script was not parsed")
        return
    path = os.path.join(TMP, "_cloudfit")
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([zsh, "-n", path], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    # loaded for real: compinit finds it and defines the function
    p = subprocess.run([zsh, "-f", "-c", f"fpath=({TMP} $fpath); autoload -Uz compinit; compinit -u -d {TMP}/zcd; "
                        "autoload -Uz _cloudfit; whence -w _cloudfit; print ${_comps[cloudfit]}"],
                       capture_output=True, text=True, timeout=60, env=ENV)
    assert p.returncode == 0 and "_cloudfit" in p.stdout, (p.stdout, p.stderr)


ZPTY = r"""
zmodload zsh/zpty
setopt extendedglob
try() {  # $1: a line to complete, $2: a name for its pty; prints what the completion added after it
  zpty -b z$2 zsh -f -i
  zpty -w z$2 "PS1='P> '; fpath=($FP \$fpath); autoload -Uz compinit; compinit -u -D; path=($BINDIR \$path)"
  sleep 0.5; zpty -r z$2 junk '*P> *P> ' 2>/dev/null
  zpty -n -w z$2 "$1"$'\t'; sleep 4
  local out=""; while zpty -r -t z$2 chunk 2>/dev/null; do out+=$chunk; done; zpty -d z$2
  out=${out//$'\e'\[[0-9;?]#[a-zA-Z]/}; out=${out//$'\r'/}
  print -r -- "<<$1>>${${(f)out}[2,-1]}"
}
"""


def zsh_tries(lines):
    """The script that completes the lines on ptys of their own, ZSH_AT_ONCE at a time (the completion is given
    a fixed 4 s to print: one line after another took a minute; all at once, under a sanitizer build on two
    busy cores, could leave some of them too little CPU in those 4 s), and prints the results in the lines'
    order."""
    out = os.path.join(TMP, "zsh-tries")
    os.makedirs(out, exist_ok=True)
    script = ZPTY
    for i, line in enumerate(lines):
        script += "try '%s' %d > %s/%d &\n" % (line, i, out, i)
        if (i + 1) % ZSH_AT_ONCE == 0:
            script += "wait\n"
    return script + "wait\n" + "".join("cat %s/%d\n" % (out, i) for i in range(len(lines)))


ZSH_AT_ONCE = 5


def test_zsh_completes_ids_of_the_db_on_the_line_and_values_after_equals():
    """zsh gave no history ids with --db on the line or an option before the subcommand (it looked at the second
    word and never passed --db), and nothing after '--objective=' or a flag's '--no-history=' or '--quiet='. Driven through a
    real zsh on a pseudo-terminal."""
    zsh = shutil.which("zsh")
    if not zsh:
        SKIPPED.append("zsh is not installed: the zsh completion was not driven")
        return
    db = os.path.join(TMP, "zsh-ids.db")
    p = subprocess.run([BIN, "recommend", "-q", "--db", db, os.path.join(SRC, "examples", "mlp-synthetic.json")],
                       capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 0, p.stderr
    fp = os.path.join(TMP, "zfp")
    os.makedirs(fp, exist_ok=True)
    with open(os.path.join(fp, "_cloudfit"), "w") as f:
        f.write(cloudfit("completion", "zsh"))
    lines = ["cloudfit history show --db %s " % db, "cloudfit history -q --db=%s show " % db,
             "cloudfit record --db %s " % db, "cloudfit recommend --objective=", "cloudfit recommend --no-history=",
             "cloudfit recommend --quiet=", "cloudfit history prune --l", "cloudfit history list --l",
             "cloudfit config show recommend --objective ", "cloudfit prices --cloud aws update --max-",
             "cloudfit prices T4 --max", "cloudfit prices update --sp", "cloudfit config show prices --max-", "cloudfit prices T4 --pr"]
    script = zsh_tries(lines)
    p = subprocess.run([zsh, "-f", "-c", script], capture_output=True, text=True, timeout=120,
                       env=dict(ENV, FP=fp, BINDIR=BINDIR))
    got = dict(re.findall(r"<<(.*?)>>(.*)", p.stdout))
    assert set(got) == set(lines), (p.stdout, p.stderr)
    for line in lines[:3]:
        assert got[line].strip().endswith(" 1") or got[line].rstrip().endswith("1"), (line, got[line])
    assert all(w in got[lines[3]] for w in ("cost", "time", "balanced")), got[lines[3]]
    assert "true" in got[lines[4]] and "false" in got[lines[4]], got[lines[4]]  # a flag's =true/=false
    # ... also for a flag with a short form (-q): the brace form {-q,--quiet} gave its long form no value
    assert "true" in got[lines[5]] and "false" in got[lines[5]], got[lines[5]]
    # history prune takes no list filter (--limit): nothing offered; list does; config show COMMAND: its values
    assert "--limit" not in got[lines[6]], got[lines[6]]
    assert "--limit" in got[lines[7]], got[lines[7]]
    assert all(w in got[lines[8]] for w in ("cost", "time", "balanced")), got[lines[8]]
    # prices update takes --max-price-change (the value of --cloud is no subcommand), not --spot; the listing
    # not --max-price-change; config show prices: every key of the section
    assert "--max-price-change" in got[lines[9]], got[lines[9]]
    assert "--max-price-change" not in got[lines[10]], got[lines[10]]
    assert "--prefer-region" in got[lines[13]] and "--price-overrides" in got[lines[13]], got[lines[13]]
    assert "--spot" not in got[lines[11]], got[lines[11]]
    assert "--max-price-change" in got[lines[12]], got[lines[12]]


def test_usage():
    p = subprocess.run([BIN, "completion", "fish"], capture_output=True, text=True, env=ENV)
    assert p.returncode == 2 and "bash or zsh" in p.stderr, p.stderr
    p = subprocess.run([BIN, "completion"], capture_output=True, text=True, env=ENV)
    assert p.returncode == 2


def report_skips():
    for why in SKIPPED:
        print(f"SKIPPED: {why}")


if __name__ == "__main__":
    rc = pyharness.run(dict(globals()), cleanup=report_skips)
    if SKIPPED and os.environ.get("CI") not in (None, "", "0", "false"):
        rc = 1
    sys.exit(rc)
