"""The ``entityworks`` console script's only module outside the package: Ctrl-C handling first,
then the command line.

Ctrl-C reaches a process at any moment, including while Python imports the command line's
modules, before click runs. Importing anything inside ``entityworks`` runs the package's
``__init__`` first, so a guard inside the package would open too late: an interrupt landing
in that ``__init__`` would escape as a KeyboardInterrupt traceback. Here :func:`main` opens
its ``try`` before the package is imported, and an interrupt at any moment after this module's
first lines ends with ``error: aborted`` and status 1. That is why this module stays top-level
(``pyproject.toml``: ``py-modules``, console script ``entityworks_launch:main``) and why the
whole guard lives here (it used to be split with ``entityworks._entry``, which imported it
back); ``python -m entityworks`` enters through it as well. (Python's own start-up, before it
runs any program code, is out of every program's reach.)
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


def redeliver_swallowed_interrupts() -> None:
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
    """Import the command line under the interrupt guard, then run it."""
    try:
        redeliver_swallowed_interrupts()
        from entityworks.cli import main as run

        run()
    except KeyboardInterrupt:
        abort()


if __name__ == "__main__":  # pragma: no cover - the console script calls main()
    main()
