"""What a player sees on a map: field of view, the walking player and the screen's window.

:mod:`.fov` is the API (``visible``, ``visible_window``, ``FieldOfView``, ``Explorer``);
:mod:`._shadowcast` computes one view, :mod:`.field` keeps one map's view between calls
(``FieldOfView``, also ``generators.view.FieldOfView``), :mod:`.explore` keeps a player's
position and memory on top of it, and :mod:`.viewport` places the screen's window on the map.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from generators.view.explore import Explorer
    from generators.view.field import FieldOfView

__all__ = ["Explorer", "FieldOfView"]


def __getattr__(name: str) -> Any:
    """``FieldOfView`` and ``Explorer`` on first use: importing the package (for
    :mod:`.viewport` alone) stays as light as it was."""
    if name == "FieldOfView":
        from generators.view.field import FieldOfView

        return FieldOfView
    if name == "Explorer":
        from generators.view.explore import Explorer

        return Explorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
