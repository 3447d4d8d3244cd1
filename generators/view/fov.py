"""Field of view: the one-shot views, the reusable view and the player who walks and
remembers, in one API.

The one-shot views (``visible``, ``visible_window``) are computed by
:mod:`generators.view._shadowcast`, the reusable one (``FieldOfView``: the map checked once,
many origins) lives in :mod:`generators.view.field`, and the walker in
:mod:`generators.view.explore`, which builds on ``FieldOfView``; this module gathers them,
so ``fov.visible``, ``fov.FieldOfView`` and ``fov.Explorer`` stay one import away without
the modules importing each other in a circle.
"""

from __future__ import annotations

from generators.view._shadowcast import OCTANTS, QUADRANTS, Point, visible, visible_window
from generators.view.explore import STEPS, Explorer
from generators.view.field import FieldOfView

__all__ = ["OCTANTS", "QUADRANTS", "STEPS", "Explorer", "FieldOfView", "Point", "visible",
           "visible_window"]  # fmt: skip
