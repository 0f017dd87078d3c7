#!/usr/bin/python3
"""`cloudfit completion bash|zsh`: the bash script loaded in bash completes
commands, a command's options (exactly those its --help lists), option
values and subcommands; the zsh script parses (zsh -n) and names every
command and option. Usage: test_completion.py CLOUDFIT_BINARY SOURCE_DIR"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = sys.argv[1], sys.argv[2]
TMP = tempfile.mkdtemp(prefix="cloudfit-completion-")
ENV = dict(os.environ, HOME=TMP, XDG_CONFIG_HOME=os.path.join(TMP, "cfg"))
SKIPPED = []


def cloudfit(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=ENV, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


BASH = os.path.join(TMP, "cloudfit.bash")
with open(BASH, "w") as f:
    f.write(cloudfit("completion", "bash"))


def complete(line):
    """COMPREPLY for the command line typed so far (a trailing space starts a new word)."""
    words = line.split()
    if line.endswith(" "):
        words.append("")
    script = ("source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_cloudfit\nprintf '%%s\\n' \"${COMPREPLY[@]}\"\n"
              % (BASH, " ".join("'%s'" % w for w in words), len(words) - 1))
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, cwd=TMP,
                       timeout=30)
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
        want = options_of(command)
        assert got == want, (command, got ^ want)
    assert complete("cloudfit recommend --rep") == ["--report"]
    assert complete("cloudfit recommend --no-") == ["--no-chart", "--no-history"]


def test_bash_completes_values_and_subcommands():
    assert complete("cloudfit recommend --objective ") == ["balanced", "cost", "time"]
    assert complete("cloudfit recommend -f ") == ["json", "markdown", "table"]
    assert complete("cloudfit history -f c") == ["csv"]
    assert complete("cloudfit recommend --spot o") == ["only"]
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


def test_zsh_script():
    text = cloudfit("completion", "zsh")
    assert text.startswith("#compdef cloudfit\n")
    for command in commands():
        assert f"\n  ({command})\n" in text, command
    assert "--max-cost-increase[" in text and "(cost time balanced)" in text
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
