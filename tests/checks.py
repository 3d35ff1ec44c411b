"""checks.py - what the Python test scripts share: checks that count, and
the summary line and exit code they end with (tests/checks.sh is the shell
scripts' counterpart)."""
import sys

counts = {"passed": 0, "failed": 0}


def check(ok, what):
    """Counts ok; prints what where it is false."""
    if ok:
        counts["passed"] += 1
    else:
        counts["failed"] += 1
        print("FAILED:", what)


def finish():
    """Prints the counts; exits 1 on any failure or when nothing ran."""
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    sys.exit(1 if counts["failed"] or not counts["passed"] else 0)
