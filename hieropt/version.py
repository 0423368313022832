"""The package version (one home: the package root, the HTML report and the CLI read it here)."""

__version__ = "0.1.0"
