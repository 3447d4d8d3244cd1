"""The type layer: what each Python type is and which values it accepts, and the records of
what it becomes in SQL, Arrow and XML (one per format, each read by its format's package).

* :mod:`.registry`: :class:`~.registry.TypeRegistry`, :class:`~.registry.TypeInfo`,
  companions, markers and lookup; it knows no particular type.
* :mod:`.codecs`: the per-format records an entry holds: :class:`~.codecs.SqlCodec`,
  :class:`~.codecs.ArrowCodec`, :class:`~.codecs.XmlCodec`.
* :mod:`.scalars`: int, float, str, bool, bytes, Decimal, the datetimes, UUID and Enum.
* :mod:`.json`: list, dict and tuple fields and nested dataclasses, stored as JSON text.
* :mod:`.arrays`: NumPy arrays, stored as ``.npy`` bytes.
* :mod:`.columns`: the built-in rules a whole column at a time, for bulk writers and
  readers (``TypeInfo.check_column``, ``Companion.split_column`` / ``join_column``).
* :mod:`.encoding`: the error naming the value a writer could not encode.
* :mod:`.default`: the default registry built from them.

Users import from :mod:`entityworks.registry`, the public face that also speaks for the
default registry; the modules here are its parts.
"""
