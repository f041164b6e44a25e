"""The package version, in one place (the build reads it from here too)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
