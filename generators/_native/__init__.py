"""The engines' C extensions, compiled when the package is built (``setup.py``): the sudoku
search (``_csolve``), the field of view (``_cfov``) and the map generators' loops
(``_cmaps``). Private: each is called only by its subpackage's Python, which keeps the
public API; every entry point checks the arrays and numbers it is handed before its loop."""
