"""XML and XSD in .NET's DataTable / DataSet shape: a format, which knows no database.

``parser`` (the hardened parser) and ``xsd`` (schemas: write, read, validate) at the bottom;
the engine on them: ``writer`` (the streaming writer) and ``reader`` (the validating
reader); then the shapes: ``table`` (one dataclass), ``dataset`` (related tables),
``diffgram`` (a DataSet's changes), and ``codegen`` (dataclass source from an XSD). Moving
rows between a database and these files is :mod:`entityworks.sql.exchange`'s.
"""
