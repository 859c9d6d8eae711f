"""Hypothesis strategies for theme inputs."""

from hypothesis import strategies as st

from kindling.themes import MODES, MOODS, TOKEN_NAMES, format_value

hex_colours = st.one_of(
    st.from_regex(r"#[0-9a-fA-F]{6}", fullmatch=True),
    st.from_regex(r"#[0-9a-fA-F]{3}", fullmatch=True),
)

_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**300),
    st.floats(),
    st.text(max_size=10),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)

intents = st.one_of(
    st.none(),
    st.dictionaries(
        st.one_of(st.sampled_from(["mood", "chromaScale", "neutralHue", "neutralTint"]), st.text(max_size=12)),
        st.one_of(_junk, st.sampled_from(MOODS), st.floats(0.5, 1.5), st.floats(0, 360), st.floats(0, 1)),
        max_size=6,
    ),
    _junk,
)

values = st.builds(format_value, st.floats(0, 1), st.floats(0, 0.5), st.floats(0, 360))

themes = st.fixed_dictionaries({mode: st.fixed_dictionaries(dict.fromkeys(TOKEN_NAMES, values)) for mode in MODES})
