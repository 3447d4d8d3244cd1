"""The ``entityworks`` console script: Ctrl-C handling first, then the command line.

Ctrl-C reaches a process at any moment, including while Python imports the command line's
modules, before click runs. The console script enters through the top-level module
``entityworks_launch``, whose ``try`` covers the import of this package; this module imports
next to nothing, and :func:`main` opens its own ``try`` before importing anything else, so an
interrupt ends with ``error: aborted`` and status 1, never a KeyboardInterrupt traceback.
(Python's own start-up, before it runs any program code, is out of every program's reach.)
"""

from __future__ import annotations

import sys

from entityworks_launch import abort as _abort


def _redeliver_swallowed_interrupts() -> None:
    """Python swallows an exception raised where it cannot propagate (a ``__del__``, a weakref
    callback, an at-fork hook) and only reports it through ``sys.unraisablehook``. A Ctrl-C
    landing there would be lost and the command would run on; send it again instead, so it
    reaches the main code a moment later (once the command has started ending, SIGINT is
    ignored and nothing is sent twice)."""
    previous = sys.unraisablehook

    def hook(unraisable: object) -> None:
        if isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
            import signal

            signal.raise_signal(signal.SIGINT)
            return
        previous(unraisable)  # type: ignore[arg-type]

    sys.unraisablehook = hook


def main() -> None:
    """Run the command line; an interrupt before or during it ends with ``error: aborted``."""
    try:
        _redeliver_swallowed_interrupts()
        from .cli import main as cli_main

        cli_main()
    except KeyboardInterrupt:
        _abort()


if __name__ == "__main__":  # pragma: no cover - ``python -m entityworks`` uses __main__.py
    main()
