import sys

from tfbench.cli import main

sys.exit(main())
