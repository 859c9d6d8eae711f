"""Consultants' webhook endpoints, and the worker that delivers the outbox's events to them."""
