"""The PostgreSQL store: many repositories' indexes in one database, each published whole.

``publish`` copies a repository's freshly built SQLite index into PostgreSQL as a new
generation (``writer.py``); ``PostgresIndex`` reads the latest one as an ``IndexStore``
(``reader.py``), its full-text search scored exactly as FTS5 scores (``search.py``,
``vectors.py``); ``schema.py`` holds the tables, their migrations and the store's URL rules.
"""

from szrag.index.pg.reader import PostgresIndex, published
from szrag.index.pg.writer import IndexerLease, Published, publish

__all__ = ["IndexerLease", "PostgresIndex", "Published", "publish", "published"]
