"""The toolkit's version (every signature carries it). A leaf: every layer reads it from here, so
nothing inside xsimpp imports the root package, which re-exports the top-level API."""

__version__ = "0.20.0"
