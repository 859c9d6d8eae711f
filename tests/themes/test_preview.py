import copy

import pytest

from kindling.themes import generate_theme, theme_css, theme_preview


def test_preview_holds_the_theme_css_and_escapes_its_text():
    theme = generate_theme("#3366cc")
    page = theme_preview(theme, title='A "B" <C> & D', subtitle="<i>saved</i>")
    assert f"<style>\n{theme_css(theme)}" in page
    assert "<title>A &quot;B&quot; &lt;C&gt; &amp; D</title>" in page
    assert "<p>&lt;i&gt;saved&lt;/i&gt;</p>" in page
    assert "<i>" not in page and "<C>" not in page


@pytest.mark.parametrize("value", ["0.5 0.1 100</style><script>x</script>", "0.5 0.1 100\n", "oklch(0.5 0.1 100)"])
def test_a_theme_that_is_not_valid_never_reaches_the_style_element(value):
    theme = copy.deepcopy(generate_theme("#3366cc"))
    theme["dark"]["ring"] = value
    with pytest.raises(ValueError):
        theme_preview(theme, title="t")
