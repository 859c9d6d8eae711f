"""Webhooks in and out: the providers' deliveries, consultants' endpoints, the outbox, the delivery worker and where it may send."""
