"""The package version, in a module that imports nothing (the runner and provenance read it)."""

__version__ = "0.1.0"
