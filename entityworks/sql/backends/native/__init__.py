"""The backends' loops in C, compiled at build time: ``pgrows`` makes PostgreSQL's binary
COPY rows from the rows' Python values (see :mod:`..pgcopy`)."""
