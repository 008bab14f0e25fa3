"""Settings every test process and the daemons it starts share.

The semantic retriever encodes every block in the background once a generation serves. The
daemons most tests start do not need it, and on a two-core machine it would take the cores
the next test wants; it is turned off here, and the tests of the retriever turn it on for
their own daemons (``SCRIPTORIUM_SEMANTIC=on``).
"""

from __future__ import annotations

import os

os.environ.setdefault("SCRIPTORIUM_SEMANTIC", "off")
