"""Byte-level tools: :mod:`.entropy` (``ent``'s figures for a file), :mod:`.codec` (bit packing)."""
