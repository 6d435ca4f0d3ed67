"""`python -m service.cli`: the operators' command line, kept at this name (the code is
`service.entrypoints.cli`)."""

import sys

from service.entrypoints.cli import main

if __name__ == "__main__":
    sys.exit(main())
