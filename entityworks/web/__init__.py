"""Browsing a level catalog in Datasette.

:mod:`entityworks.web.plugin` is the Datasette plugin (registered through the ``datasette``
entry point, installed with ``pip install "entityworks[web]"``); :mod:`entityworks.web._pictures`
renders what it shows and needs no Datasette.
"""
