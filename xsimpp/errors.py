"""User-facing errors: one clear sentence saying what is wrong and how to fix it."""


class XsimppError(Exception):
    """An error caused by input or environment, reported to the user without a traceback."""


class MissingResourceError(XsimppError):
    """A dataset, model or package is not available here (offline: say how to get it)."""


class BadInputError(XsimppError, ValueError):
    """Input data violates a precondition (line counts, empty lines, NaN vectors, k too large)."""
