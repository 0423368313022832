"""Presentation: every function returns a string, a rich table, a dict or writes the file it is
given; only :mod:`hieropt.cli` prints. One module per output kind."""
