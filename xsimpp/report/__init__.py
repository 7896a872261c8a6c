"""Reports: the static HTML leaderboard and PNG charts (matplotlib, imported only when plotting)."""

from .html import leaderboard_html, write_leaderboard_html

__all__ = ["leaderboard_html", "write_leaderboard_html"]
