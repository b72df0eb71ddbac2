"""Run the ``tfrclab`` command line: ``python -m tfrclab ...``."""

import sys

from tfrclab.cli import main

sys.exit(main())
