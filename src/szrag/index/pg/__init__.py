"""The PostgreSQL store: many repositories' indexes in one database, each published whole.

``publish`` copies a repository's freshly built SQLite index into PostgreSQL as a new
generation (``publish.py``); ``PostgresIndex`` reads the latest one as an ``IndexStore``
(``reader.py``), its full-text search scored exactly as FTS5 scores (``search.py``,
``vectors.py``); ``schema.py`` holds the tables, their migrations and the store's URL rules.
"""

from szrag.index.pg.publish import Published, publish
from szrag.index.pg.reader import PostgresIndex

__all__ = ["PostgresIndex", "Published", "publish"]
