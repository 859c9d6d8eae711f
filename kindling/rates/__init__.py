"""The ECB's euro reference rates, imported as published, and the quotes conversions use."""
