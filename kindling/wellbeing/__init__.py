"""Wellbeing survey answers and the weekly figures published from them."""
