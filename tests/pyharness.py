"""The runner of the end-to-end Python tests: every function named test_*
in a module runs in name order; failures are printed with their traceback
and counted; the closing line is "N passed, N failed" (what CI reads).
Also the environment every test runs cloudfit in (clean_env) and a run
on a pseudo-terminal (on_terminal)."""
import os
import pty
import select
import shutil
import stat
import tempfile
import time
import traceback

# Variables that make cloudfit think it runs in CI (common/ci_env.c).
CI_VARS = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "JENKINS_URL", "JENKINS_HOME", "BUILDKITE", "CIRCLECI")


def clean_env(home, strip=("CLOUDFIT_CI_",), **extra):
    """os.environ without the CI providers' variables (and those starting
    with a prefix in `strip`), so a test behaves the same on a developer
    machine and in a CI pipeline; HOME and XDG_DATA_HOME under `home`, no
    colour; then `extra` (values made strings)."""
    prefixes = ("GITHUB_", "CI_", "BUILDKITE_", "CIRCLE_") + tuple(strip)
    env = {k: v for k, v in os.environ.items() if k not in CI_VARS and not k.startswith(prefixes)}
    env.update(HOME=home, XDG_DATA_HOME=os.path.join(home, "xdg"), NO_COLOR="1")
    env.update({k: str(v) for k, v in extra.items()})
    return env


class Skip(Exception):
    """Raised by a test that does not apply here (its message says why):
    counted as skipped, never as passed."""


_TEMP_DIRS = []


def temp_dir(prefix):
    """A new folder under $TMPDIR for one test file, removed when run()
    ends — unless a test failed (kept for a post-mortem, and run() says
    where) or CLOUDFIT_KEEP_TEST_TMP is set. The fault tests' folder held
    a 634 MB database; a left-behind folder per run filled the disk."""
    path = tempfile.mkdtemp(prefix=prefix)
    _TEMP_DIRS.append(path)
    return path


def _remove_tree(path):
    def writable_then_retry(func, name, _exc):
        # tests make folders and files read-only on purpose (permission errors)
        for p in (os.path.dirname(name), name):
            try:
                os.chmod(p, stat.S_IRWXU)
            except OSError:
                pass
        try:
            func(name)
        except OSError:
            pass
    shutil.rmtree(path, onerror=writable_then_retry)


def remove_temp_dirs(failed):
    """The end of a test file's run: its temp_dir folders removed, or kept
    (and named) after a failure or with CLOUDFIT_KEEP_TEST_TMP."""
    keep = failed or os.environ.get("CLOUDFIT_KEEP_TEST_TMP")
    for path in _TEMP_DIRS:
        if keep:
            print(f"kept {path}", flush=True)
        else:
            _remove_tree(path)
    _TEMP_DIRS.clear()


def run(namespace, cleanup=None):
    only = os.environ.get("PYHARNESS_ONLY", "")  # while iterating: run the tests whose name has this text
    tests = [(n, f) for n, f in sorted(namespace.items()) if n.startswith("test_") and callable(f) and only in n]
    passed = failed = skipped = 0
    try:
        for name, fn in tests:
            started = time.monotonic()
            try:
                fn()
                passed += 1
                print(f"[ OK ] {name} ({time.monotonic() - started:.1f} s)", flush=True)
            except Skip as why:
                skipped += 1
                print(f"[SKIP] {name}: {why}", flush=True)
            except Exception:  # report and go on
                failed += 1
                print(f"[FAIL] {name}", flush=True)
                traceback.print_exc()
    finally:
        if cleanup:
            cleanup()
        remove_temp_dirs(failed)
    print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


def on_terminal(argv, env, columns=None, timeout_s=120):
    """Runs argv (argv[0] the program) with stdout and stderr on one
    pseudo-terminal of `columns` columns (None: the default size);
    returns (exit code, everything printed, as text)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(argv[0], argv, env)
    if columns:
        import fcntl
        import struct
        import termios
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    out = b""
    while select.select([fd], [], [], timeout_s)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode("utf-8", "replace")
