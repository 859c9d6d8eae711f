"""Kindling: kindness, volunteering, giving and wellbeing as ESG evidence."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("kindling")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0.0.0"
