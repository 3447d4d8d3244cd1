"""A dataclass -> its table model (schema, construction, defaults)."""
