"""Business rules as plain functions: each takes the database session as `db`."""
