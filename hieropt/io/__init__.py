"""Readers and writers: the only part of hieropt that opens input files.

Every reader turns malformed input and pydantic ``ValidationError`` into a one-line
:class:`hieropt.errors.InputError` naming the file, the field and the fix.
"""
