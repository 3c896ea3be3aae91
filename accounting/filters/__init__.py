"""Privacy filters behind one protocol (see :mod:`accounting.filters.base`)."""
