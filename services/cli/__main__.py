"""``python -m athenaeum.services.cli``: the ``athenaeum`` command."""

import sys

from athenaeum.services.cli.entry import main

sys.exit(main())
