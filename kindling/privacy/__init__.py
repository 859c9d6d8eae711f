"""Personal data: a person's copy of everything held about them, and its erasure (docs/decisions.md §15)."""
