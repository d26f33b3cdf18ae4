"""The package version, kept equal to the shellsup binary's version."""

__version__ = "0.1.0"
