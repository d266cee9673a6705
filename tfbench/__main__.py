"""`tfbench` (the console script) and `python -m tfbench`: a fault of tfbench's own, at import
too (a missing dependency), and an interrupt at any moment end as tfbench.faults says."""

import sys

from tfbench.faults import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    crashed,
    interrupted,
    was_interrupted,
    watch_interrupts,
)


def main() -> int:
    watch_interrupts()
    try:
        from tfbench.cli import main as run

        code = run()
        # an interrupt a callback swallowed, sent again too late to be raised, is still one
        ended = code in (EXIT_INTERRUPTED, EXIT_TERMINATED)
        return interrupted() if was_interrupted() and not ended else code
    except KeyboardInterrupt:  # during the imports (the command's own: cli.main)
        return interrupted()
    except Exception:
        return crashed()


if __name__ == "__main__":
    sys.exit(main())
