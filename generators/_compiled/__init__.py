"""The one private home of the compiled-kernel plumbing that every room of ``generators`` uses.

:mod:`.jit` compiles the hot loops (numba, with a disk cache only this user can have
written), :mod:`.native` keeps and loads the C entry points' machine code without numba, and
:mod:`.private` finds and guards the folder both keep their code in. Apart from the rooms
(maps, view, sudoku) so that the security of the cache lives in one place; private to
``generators``: nothing outside the package imports it.
"""
