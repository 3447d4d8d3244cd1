"""Seeded maps: caves, dungeons, islands and cellular caves, their regions, placements and pictures.

Each generator module has one ``generate`` function returning a dataclass with a NumPy
grid (1 = wall, 0 = floor) and the seed that rebuilds it: :mod:`.caves`, :mod:`.dungeon`,
:mod:`.islands`, :mod:`.cellular`. :mod:`.regions` and :mod:`.placement` analyse a grid,
:mod:`._visits` is the random-visit automaton that caves and islands share, and
:mod:`.render` draws a grid (PNG, ASCII, Tiled JSON).
"""
