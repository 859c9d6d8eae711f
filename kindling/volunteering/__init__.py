"""Volunteer opportunities, check-ins and the codes shown at the venue."""
