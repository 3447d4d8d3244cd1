"""Field of view: the one-shot views and the player who walks and remembers, in one API.

The views are computed by :mod:`generators.view.shadowcast` and the walker lives in
:mod:`generators.view.explore`, which builds on the views; this module gathers both, so
``fov.visible`` and ``fov.Explorer`` stay one import away without either module importing
the other in a circle.
"""

from __future__ import annotations

from generators.view.explore import STEPS, Explorer
from generators.view.shadowcast import OCTANTS, QUADRANTS, Point, visible, visible_window

__all__ = ["OCTANTS", "QUADRANTS", "STEPS", "Explorer", "Point", "visible", "visible_window"]
