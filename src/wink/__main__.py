"""`python -m wink ...` is the `wink` command."""

import sys

from .cli import main

sys.exit(main())
