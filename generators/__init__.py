"""Seeded procedural-content and puzzle algorithms: maps, field of view, sudoku, entropy.

This package stands alone: it never imports ``entityworks``. Results are plain dataclasses
and NumPy arrays that any persistence layer can store. The entry points, by room:

* :mod:`generators.maps`: ``caves``, ``dungeon``, ``islands``, ``cellular`` (one
  ``generate`` each), ``regions``, ``placement``, ``render``;
* :mod:`generators.view`: ``fov`` (``visible``, ``FieldOfView``, ``Explorer``), ``viewport``;
* :mod:`generators.sudoku`: the sudoku API itself (``sudoku.solve``, ``solve_many``,
  ``generate``, ``read_euler``), and ``sudoku.euler``;
* :mod:`generators.bytes`: ``entropy``, ``codec``;
* ``python -m generators.warmup`` compiles the hot loops ahead of the first real call.
"""

__version__ = "0.16.0"
