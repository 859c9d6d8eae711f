from kindling.themes import TOKEN_NAMES, generate_theme, theme_css


def test_theme_css_has_root_and_dark_rules_in_token_order():
    theme = generate_theme("#3366cc")
    lines = theme_css(theme).split("\n")

    assert lines[0] == ":root {"
    assert lines[1:32] == [f"  --{name}: oklch({theme['light'][name]});" for name in TOKEN_NAMES]
    assert lines[32:34] == ["}", ".dark {"]
    assert lines[34:65] == [f"  --{name}: oklch({theme['dark'][name]});" for name in TOKEN_NAMES]
    assert lines[65:] == ["}", ""]
