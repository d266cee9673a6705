"""`tfbench` (the console script) and `python -m tfbench`. A fault of tfbench's own, at
import too (a missing dependency), exits EXIT_CRASH with its traceback: never 1, which a
command gives as a verdict and a CI step may accept."""

import sys
import traceback

EXIT_CRASH = 70  # sysexits' EX_SOFTWARE


def crashed() -> int:
    """Said, with the traceback of the exception being handled: EXIT_CRASH."""
    traceback.print_exc()
    print(f"tfbench: crashed (exit {EXIT_CRASH}): a fault of tfbench's own", file=sys.stderr)
    return EXIT_CRASH


def main() -> int:
    try:
        from tfbench.cli import main as run
    except Exception:
        return crashed()
    return run()


if __name__ == "__main__":
    sys.exit(main())
