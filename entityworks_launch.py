"""The ``entityworks`` console script's first module, kept outside the package on purpose.

Importing anything inside ``entityworks`` runs the package's ``__init__`` first, and a Ctrl-C
landing there would escape as a KeyboardInterrupt traceback. Here the ``try`` is open before
the package is imported, so an interrupt at any moment after this module's first lines ends
with ``error: aborted`` and status 1 (see ``entityworks._entry`` for the rest).
"""

from __future__ import annotations

import sys


def abort() -> None:
    """End an interrupted command: one line on stderr, status 1."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the exit short
    try:
        sys.stderr.write("error: aborted\n")
        sys.stderr.flush()
    finally:
        sys.exit(1)


def main() -> None:
    """Import the command line under the interrupt guard, then run it."""
    try:
        from entityworks._entry import main as run
    except KeyboardInterrupt:
        abort()
    run()
