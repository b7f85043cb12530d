"""``python -m cuzk_core`` runs the ``cuzk`` command line."""

import sys

from cuzk_core.cli import main

sys.exit(main())
