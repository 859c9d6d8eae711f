"""Donations and the payment events that settle them."""
