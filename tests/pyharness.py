"""The runner of the end-to-end Python tests: every function named test_*
in a module runs in name order; failures are printed with their traceback
and counted; the closing line is "N passed, N failed" (what CI reads)."""
import traceback


def run(namespace, cleanup=None):
    tests = [(n, f) for n, f in sorted(namespace.items()) if n.startswith("test_") and callable(f)]
    passed = failed = 0
    for name, fn in tests:
        try:
            fn()
            passed += 1
            print(f"[ OK ] {name}", flush=True)
        except Exception:  # report and go on
            failed += 1
            print(f"[FAIL] {name}", flush=True)
            traceback.print_exc()
    if cleanup:
        cleanup()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
