"""entityworks' own plugins: what it registers through its hooks (:mod:`entityworks.hooks`),
as an installed plugin would.

* :mod:`.types`: the built-in types (scalars, JSON containers, NumPy arrays, Enums, nested
  dataclasses) of every registry the hooks fill.
* :mod:`.catalog`: the catalog's column types (packed grids, point paths) and map kinds.
* :mod:`.commands`: the command families of ``entityworks``.

:func:`entityworks.hooks.plugin_manager` registers them by name. Each imports only the hook
marker at its top and what its hooks need inside them, so registering them costs the command
line's start nothing.
"""
