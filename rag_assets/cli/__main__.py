"""`python -m rag_assets.cli`: the `trecho` command."""

import sys

from rag_assets.cli import main

sys.exit(main())
