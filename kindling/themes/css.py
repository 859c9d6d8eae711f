"""A theme as CSS custom properties for a Tailwind v4 (shadcn/ui) app."""

from .tokens import TOKEN_NAMES

_SELECTORS = {"light": ":root", "dark": ".dark"}


def theme_css(theme: dict[str, dict[str, str]]) -> str:
    """Return `:root { --name: oklch(L C H); ... }` and `.dark { ... }` rules for a valid theme."""
    return "".join(_rule(selector, theme[mode]) for mode, selector in _SELECTORS.items())


def _rule(selector: str, tokens: dict[str, str]) -> str:
    declarations = "".join(f"  --{name}: oklch({tokens[name]});\n" for name in TOKEN_NAMES)
    return f"{selector} {{\n{declarations}}}\n"
