"""`tfbench` (the console script) and `python -m tfbench`: a fault of tfbench's own, at import
too (a missing dependency), and an interrupt at any moment end as tfbench.faults says."""

import sys

from tfbench.faults import crashed, interrupted


def main() -> int:
    try:
        from tfbench.cli import main as run

        return run()
    except KeyboardInterrupt:  # during the imports (the command's own: cli.main)
        return interrupted()
    except Exception:
        return crashed()


if __name__ == "__main__":
    sys.exit(main())
