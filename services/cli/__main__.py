"""``python -m athenaeum.services.cli``: the ``athenaeum`` command."""

import sys

from athenaeum.services.cli.main import main

sys.exit(main())
