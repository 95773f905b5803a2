"""The base layer: records and primitives every other layer may use, importing nothing of
szrag above it (the exception tree, text and tokens, redaction, the public JSON boundary, the
repository file and profiles, the provider and server settings, the variable registry,
activity records)."""
