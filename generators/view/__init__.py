"""What a player sees on a map: field of view, the walking player and the screen's window.

:mod:`.fov` is the API (``visible``, ``visible_window``, ``Explorer``); :mod:`.shadowcast`
computes one view, :mod:`.explore` keeps a player's position and memory on top of it, and
:mod:`.viewport` places the screen's window on the map.
"""
