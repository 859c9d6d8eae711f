"""Donations, and the giving programs that match them and pay for volunteered hours."""
