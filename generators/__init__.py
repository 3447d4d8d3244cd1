"""Seeded procedural-content and puzzle algorithms: maps, field of view, sudoku, entropy.

This package stands alone: it never imports ``entityworks``. Results are plain dataclasses
and NumPy arrays that any persistence layer can store.
"""

__version__ = "0.1.0"
