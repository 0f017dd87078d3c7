#!/usr/bin/python3
"""The house rules of docs/architecture.md, checked on the source tree.

* Three floors: the middle floor (spec, advisor, profiler, pricing, db) never
  includes another middle-floor module's headers, nor render/ or cli/; the
  ground (common, cuda_probe) includes none of them; only profiler/ uses
  cuda_probe/; render/ includes nothing from cli/. A module is its top
  folder, sub-folders included (advisor/model/ is the advisor).
* One home per concept: the plain structs the modules exchange sit next to
  the front door of the module that fills them, in `cloudfit/<module>/types.h`
  (what all share in `cloudfit/common/shared_types.h`); any module may
  include a types.h, and a types.h includes nothing but other types.h,
  shared_types.h, status.h and the C library. No aggregate
  `cloudfit/types.h`.
* usecase/ (the library's entry points, one per use case) is on the top
  floor: it may include the middle floor, common and render's result
  structs, nothing from cli/; nothing below it includes its headers, nor
  does render/ (it renders results, it does not run use cases).
* Exactly one source file says `#ifdef CLOUDFIT_HAVE_CUDA`.
* cli/ is thin: at most 10 % of the code lines (C and CUDA sources and
  headers outside tests/, the count issue 12 set).
* No decision by the words of an error message: library and command-line
  code never compares cf_error_message() (tests and fuzz targets, which
  check what the message says, may).
* Renderers compute nothing: a render/ object imports no advisor function
  but the look-up of a name (cf_*_name); what it shows the library computed
  into the result struct (cloudfit/advisor/explain.h). Checked on the
  objects (nm), when CMake passes them.
* The project's files are self-contained: none cites the design brief, a
  file outside the repository that users do not have (docs/ covers it).
Usage: test_layout.py SOURCE_DIR [--render-objects=A.o:B.o --advisor-objects=C.o:...]"""
import os
import re
import shutil
import subprocess
import sys
import unittest

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
OBJECTS = {}  # "render" / "advisor": the library's object files (from CMake)
for arg in list(sys.argv[1:]):
    m = re.match(r"--(render|advisor)-objects=(.*)", arg)
    if m:
        OBJECTS[m.group(1)] = [p for p in m.group(2).split(":") if p]
        sys.argv.remove(arg)
MIDDLE = ("spec", "advisor", "profiler", "pricing", "db")
GROUND = ("common", "cuda_probe")
TOP = ("render", "usecase", "cli")
CODE_DIRS = MIDDLE + GROUND + TOP + ("include", "tools", "fuzz", "bench")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
QUOTED = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def sources(folder):
    for root, dirs, files in os.walk(os.path.join(SRC, folder)):
        dirs[:] = [d for d in dirs if not d.startswith("build") and d != "CMakeFiles"]
        for f in files:
            if f.endswith((".c", ".h", ".cu")):
                yield os.path.join(root, f)


TYPES = re.compile(r"cloudfit/[a-z_]+/types\.h$")


def module_of_header(inc):
    """The module a `cloudfit/...` include belongs to, or None. A module's
    types.h (plain structs any module may exchange) counts as common."""
    if TYPES.match(inc):
        return "common"
    m = re.match(r"cloudfit/([a-z_]+)(?:\.h|/)", inc)
    if not m:
        return None
    name = m.group(1)
    return {"status": "common", "version": "common", "cuda_probe": "cuda_probe"}.get(name, name)


def includes(path):
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


class Layout(unittest.TestCase):
    def check_floor(self, folder, allowed):
        bad = []
        for path in sources(folder):
            for inc in includes(path):
                mod = module_of_header(inc)
                if mod and mod not in allowed:
                    bad.append("%s includes %s" % (os.path.relpath(path, SRC), inc))
                if inc.split("/")[0] in TOP and not inc.startswith("cloudfit/"):
                    bad.append("%s includes %s" % (os.path.relpath(path, SRC), inc))
        self.assertEqual(bad, [], "\n".join(bad))

    def test_middle_floor_modules_do_not_include_each_other(self):
        for mod in MIDDLE:
            allowed = {mod, "common"} | ({"cuda_probe"} if mod == "profiler" else set())
            with self.subTest(module=mod):
                self.check_floor(mod, allowed)

    def test_ground_includes_nothing_above(self):
        for mod in GROUND:
            with self.subTest(module=mod):
                self.check_floor(mod, {mod, "common"})

    def test_usecase_includes_the_floors_below_and_render(self):
        self.check_floor("usecase", set(MIDDLE) | {"common", "render", "usecase"})

    def test_nothing_below_usecase_includes_it(self):
        bad = []
        for folder in MIDDLE + GROUND + ("render", "include"):
            for path in sources(folder):
                if os.path.relpath(path, SRC).startswith(os.path.join("include", "cloudfit", "usecase")):
                    continue
                for inc in includes(path):
                    if module_of_header(inc) == "usecase":
                        bad.append("%s includes %s" % (os.path.relpath(path, SRC), inc))
        self.assertEqual(bad, [], "\n".join(bad))

    def test_nothing_below_cli_includes_a_cli_header(self):
        bad = []
        for folder in MIDDLE + GROUND + ("render", "usecase", "include"):
            for path in sources(folder):
                with open(path, encoding="utf-8") as f:
                    for inc in QUOTED.findall(f.read()):
                        here = os.path.join(os.path.dirname(path), inc)
                        if not os.path.exists(here) and os.path.exists(os.path.join(SRC, "cli", inc)):
                            bad.append("%s includes cli/%s" % (os.path.relpath(path, SRC), inc))
        self.assertEqual(bad, [], "\n".join(bad))

    def test_types_headers_are_plain(self):
        found, bad = [], []
        for path in sources("include"):
            rel = os.path.relpath(path, os.path.join(SRC, "include"))
            if not TYPES.match(rel):
                continue
            found.append(rel)
            for inc in includes(path):
                if "/" in inc and not (TYPES.match(inc) or inc in ("cloudfit/common/shared_types.h",
                                                                    "cloudfit/status.h")):
                    bad.append("%s includes %s" % (rel, inc))
        self.assertGreaterEqual(len(found), 5, "too few cloudfit/<module>/types.h: %s" % found)
        self.assertEqual(bad, [], "a types.h holds plain structs: " + ", ".join(bad))
        self.assertFalse(os.path.exists(os.path.join(SRC, "include", "cloudfit", "types.h")),
                         "cloudfit/types.h is back: include the concept's header instead")

    def test_one_place_says_ifdef_cuda(self):
        hits = []
        for folder in CODE_DIRS:
            for path in sources(folder):
                with open(path, encoding="utf-8") as f:
                    if re.search(r"#\s*(ifdef|if\s+defined)\s*\(?\s*CLOUDFIT_HAVE_CUDA", f.read()):
                        hits.append(os.path.relpath(path, SRC))
        self.assertEqual(len(hits), 1, "files that test CLOUDFIT_HAVE_CUDA: %s" % hits)

    def test_cli_is_at_most_a_tenth_of_the_code(self):
        lines = {}
        for folder in CODE_DIRS:
            n = 0
            for path in sources(folder):
                with open(path, encoding="utf-8") as f:
                    n += sum(1 for _ in f)
            lines[folder] = n
        total = sum(lines.values())
        share = lines["cli"] / total
        print("cli/ %d of %d code lines (%.1f %%)" % (lines["cli"], total, 100 * share))
        self.assertGreater(total, 10000, "the count found too little code: is SOURCE_DIR right?")
        self.assertLessEqual(share, 0.10, "cli/ is %.1f %% of the code lines (at most 10 %%, issue 26): %s" % (100 * share, lines))


    def test_render_imports_no_model_function(self):
        if not OBJECTS.get("render") or not OBJECTS.get("advisor"):
            self.skipTest("no objects given (run it through ctest)")
        self.assertIsNotNone(shutil.which("nm"), "nm (binutils) is needed to read the objects' symbols")
        out = subprocess.run(["nm", "--defined-only", *OBJECTS["advisor"]], capture_output=True, text=True,
                             check=True).stdout
        advisor = {f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] in "TDRB"}
        self.assertGreater(len(advisor), 100, "too few advisor symbols: are the objects right?")
        bad, obj = [], None
        out = subprocess.run(["nm", "--undefined-only", "-A", *OBJECTS["render"]], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():  # "path/x.c.o:                 U cf_symbol"
            obj, _, rest = line.rpartition(":")
            sym = rest.split()[-1] if rest.split() else ""
            if sym in advisor and not re.fullmatch(r"cf_\w+_name", sym):
                bad.append("%s calls %s" % (os.path.basename(obj), sym))
        self.assertEqual(bad, [], "render/ computes: put it in the result struct (cloudfit/advisor/explain.h): " +
                         ", ".join(sorted(bad)))

    def test_no_decision_by_message_text(self):
        compare = re.compile(r"\b(strstr|strcasestr|strncmp|strcmp|strncasecmp|strcasecmp)\s*\(\s*cf_error_message\s*\(")
        hits = []
        for folder in MIDDLE + GROUND + TOP + ("include", "tools", "bench"):
            for path in sources(folder):
                with open(path, encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        if compare.search(line):
                            hits.append("%s:%d" % (os.path.relpath(path, SRC), n))
        self.assertEqual(hits, [], "say it with a status or a field: " + ", ".join(hits))

    def test_no_file_cites_the_design_brief(self):
        # The name is split so that this file does not cite it either.
        cite = re.compile(r"\b" + "DES" + r"IGN(\.md|\s*§|\b)")
        skip = {".git", "CMakeFiles", "Testing"}
        hits = []
        for root, dirs, files in os.walk(SRC):
            dirs[:] = [d for d in dirs if d not in skip and not d.startswith("build")]
            for f in files:
                path = os.path.join(root, f)
                try:
                    with open(path, encoding="utf-8") as fh:
                        text = fh.read()
                except (UnicodeDecodeError, OSError):
                    continue
                for n, line in enumerate(text.splitlines(), 1):
                    if cite.search(line):
                        hits.append("%s:%d" % (os.path.relpath(path, SRC), n))
        self.assertEqual(hits, [], "cite docs/ instead: " + ", ".join(hits))


if __name__ == "__main__":
    unittest.main(verbosity=2)
