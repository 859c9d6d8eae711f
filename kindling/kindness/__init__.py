"""Kindness acts, their statistics, and the verification that earns each level."""
