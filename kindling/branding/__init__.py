"""White-labelling: each organization's saved theme and the AI palette provider."""
