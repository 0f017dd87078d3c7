#!/usr/bin/python3
"""The manual page (issue 26): docs/cloudfit.1 is what the build generates
from the one option table (BUILD/docs/cloudfit.1, `cloudfit help --man`),
it documents every option of every command exactly as that command's
--help lists it (short name, argument, help text) and no other, and man(1)
renders it without a warning.
Usage: test_man_page.py CLOUDFIT_BINARY SOURCE_DIR"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pyharness  # noqa: E402

BIN, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TMP = pyharness.temp_dir(prefix="cloudfit-man-")
ENV = pyharness.clean_env(TMP)
CHECKED_IN = os.path.join(SRC, "docs", "cloudfit.1")
BUILT = os.path.join(os.path.dirname(os.path.dirname(BIN)), "docs", "cloudfit.1")
REGENERATE = "regenerate it: cp %s %s (or cloudfit help --man > docs/cloudfit.1)" % (BUILT, CHECKED_IN)


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, env=ENV, timeout=60)
    assert p.returncode == 0, (args, p.returncode, p.stderr)
    return p.stdout


def commands():
    names, listing = [], False
    for line in run("--help").splitlines():
        if line == "commands:":
            listing = True
        elif listing and re.match(r"  \S", line):
            names.append(line.split()[0])
        elif listing and not line.strip():
            break
    return names


def help_options(command):
    """{"--name": (short, ARG, help)} from `cloudfit COMMAND --help` (wrapped
    at 80 columns: continuation lines start in column 32)."""
    options, current = {}, None
    for line in run(command, "--help").splitlines():
        m = re.match(r"^  (?:-(\w), |    )--([\w-]+)(?: (\S+))?(?:\s{2,}(.*))?$", line)
        if m:
            current = "--" + m.group(2)
            options[current] = [m.group(1), m.group(3), m.group(4) or ""]
        elif current and line.startswith(" " * 31) and line.strip():
            options[current][2] = (options[current][2] + " " + line.strip()).strip()
        elif not line.strip():
            current = None
    return {k: tuple(v) for k, v in options.items()}


def unroff(text):
    """Back from troff: escapes of man_text (cli/cmd_help.c) and the fonts."""
    text = re.sub(r"\\\[u([0-9A-F]{4,5})\]", lambda m: chr(int(m.group(1), 16)), text)
    text = re.sub(r"\\f[BIR]", "", text)
    return text.replace("\\&", "").replace("\\-", "-").replace("\\\\", "\\")


def man_options(page):
    """{command: {"--name": (short, ARG, help)}} from the man page's
    "COMMAND: name" sections."""
    sections = {}
    for m in re.finditer(r"^\.SH COMMAND: (\S+)\n(.*?)(?=^\.SH )", page, re.M | re.S):
        opts = {}
        for o in re.finditer(r"^\.TP\n(.*)\n(.*)$", m.group(2), re.M):
            head = re.match(r"^(?:\\fB\\-(\w)\\fR, )?\\fB\\-\\-(.+?)\\fR(?: \\fI(.+?)\\fR)?$", o.group(1))
            assert head, "an option line the man page should not have: %r" % o.group(1)
            opts["--" + unroff(head.group(2))] = (head.group(1), unroff(head.group(3)) if head.group(3) else None,
                                                 unroff(o.group(2)))
        sections[m.group(1)] = opts
    return sections


def test_checked_in_page_is_the_generated_one():
    generated = run("help", "--man")
    assert os.path.exists(BUILT), "the build did not generate %s" % BUILT
    with open(BUILT) as f:
        assert f.read() == generated, "%s is older than the binary: rebuild" % BUILT
    with open(CHECKED_IN) as f:
        assert f.read() == generated, "docs/cloudfit.1 is not what the option table generates; " + REGENERATE


def test_every_option_of_every_command_as_its_help_says():
    with open(CHECKED_IN) as f:
        sections = man_options(f.read())
    names = commands()
    assert len(names) >= 10 and set(sections) == set(names), (names, sorted(sections))
    checked = 0
    for command in names:
        want, got = help_options(command), sections[command]
        assert "--help" in want, (command, want)
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        assert not missing and not extra, "%s: not in the man page %s, not in --help %s" % (command, missing, extra)
        for name, (short, arg, text) in want.items():
            assert got[name] == (short, arg, text), (command, name, got[name], (short, arg, text))
            checked += 1
    assert checked > 100, checked
    print("  %d options of %d commands match their --help" % (checked, len(names)))


def test_defaults_in_help_are_the_spec_reference_defaults():
    """One constant per default (issue 26): the defaults --help prints come
    from the library's constants, and docs/spec.md states the same ones."""
    spec_doc = open(os.path.join(SRC, "docs", "spec.md")).read()
    help_text = subprocess.run([BIN, "recommend", "--help"], capture_output=True, text=True, env=ENV,
                               timeout=30).stdout
    for option, key in (("max-nodes", "max_nodes"), ("max-gpus", "max_gpus")):
        shown = re.search(r"--%s N\s+override the spec's search\.%s \((\d+) when\s+neither is set\)" % (option, key), help_text)
        documented = re.search(r"^\| `%s` \| integer \| (\d+) \|" % key, spec_doc, re.M)
        assert shown and documented, (option, bool(shown), bool(documented))
        assert shown.group(1) == documented.group(1), (option, shown.group(1), documented.group(1))
        print("  --%s: default %s in --help and docs/spec.md" % (option, shown.group(1)))


def test_man_renders_it_without_a_warning():
    if not shutil.which("man"):
        raise pyharness.Skip("no man(1) here")
    p = subprocess.run(["man", "-l", CHECKED_IN], capture_output=True, text=True, timeout=60,
                       env=dict(ENV, MANWIDTH="100", LC_ALL="C.UTF-8", MANPAGER="cat", PAGER="cat"))
    assert p.returncode == 0 and not p.stderr.strip(), (p.returncode, p.stderr)
    text = p.stdout
    for needle in ("recommend [options] MODEL.json", "--deadline-hours H", "-f, --format FORMAT", "postgresql://…",
                   "COMMAND: rebalance", "EXIT STATUS"):
        assert needle in text, needle


if __name__ == "__main__":
    sys.exit(pyharness.run(dict(globals())))
