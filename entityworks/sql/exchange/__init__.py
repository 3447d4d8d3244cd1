"""Moving rows between a database and a file format: XML tables, .NET DataSets and
DiffGrams, Arrow.

The formats (:mod:`entityworks.xml`, :mod:`entityworks.arrow`) know nothing of databases;
the :class:`~entityworks.sql.store.Store` delegates its ``export_xml``, ``import_xml``,
``export_dataset``, ``import_dataset``, ``import_diffgram`` and ``to_arrow`` here, and this
package drives the formats' public API and the Store's public members, named by the
Protocol :class:`._facade.StoreFacade` (nothing here imports the Store: it is the layer above).
Modules: ``xml`` (one table), ``dataset``, ``diffgram``, ``arrow``, and what imports share:
``rows`` (decoded rows written by the Store's encoded-row path, no instance per row),
``new_file`` (a refused import leaves no new database file) and ``committed_ddl`` (where DDL
commits at once, MariaDB's). What differs per backend is a method of its ``Backend``.
"""
