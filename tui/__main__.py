"""``python -m tui``: the same entry point as the ``kompakt`` console script."""

import sys

from tui.cli import main

sys.exit(main())
