"""``python -m chat.jobs migrate|worker``: :func:`chat.jobs.worker.main`."""

import sys

from chat.jobs.worker import main

sys.exit(main())
