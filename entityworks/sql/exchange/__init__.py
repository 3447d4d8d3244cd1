"""Moving rows between a database and a file format: XML tables, .NET DataSets and
DiffGrams, Arrow.

The formats (:mod:`entityworks.xml`, :mod:`entityworks.arrow`) know nothing of databases;
the :class:`~entityworks.sql.store.Store` delegates its ``export_xml``, ``import_xml``,
``export_dataset``, ``import_dataset``, ``import_diffgram`` and ``to_arrow`` here, and this
package drives the formats' public API and the Store's public members. Modules: ``xml``
(one table), ``dataset``, ``diffgram``, ``arrow``, and what imports share: ``new_file`` (a
refused import leaves no new SQLite file) and ``committed_ddl`` (MariaDB, whose DDL commits).
"""
