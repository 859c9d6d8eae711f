"""A self-contained HTML page showing a theme: its colours in both modes and sample components."""

from html import escape

from .css import theme_css
from .srgb import to_hex
from .tokens import MODES, TOKEN_NAMES, validate_theme

# The page needs nothing but its own <style>: no scripts, fonts, images or other requests.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

# Fixed geometry, so that a screenshot finds each mode's primary button at a known place:
# the 72 px header, then the two modes side by side in 600 px columns; in each, the
# buttons row starts 24 px from the left and 64 px from the top of the sample area.
_PAGE_CSS = """
:root { color-scheme: light; }
.dark { color-scheme: dark; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: #fff; color: #111; }
.page-header { height: 72px; overflow: hidden; padding: 12px 24px; border-bottom: 1px solid #ddd; }
.page-header h1 { margin: 0; font-size: 20px; line-height: 28px; }
.page-header p { margin: 4px 0 0; font-size: 13px; color: #555; }
.modes { display: grid; grid-template-columns: 600px 600px; }
.mode { background: var(--background); color: var(--foreground); }
.sample { position: relative; height: 480px; padding: 128px 24px 24px; }
.sample h2 { position: absolute; top: 16px; left: 24px; margin: 0; font-size: 18px; line-height: 32px; }
.buttons { position: absolute; top: 64px; left: 24px; display: flex; gap: 12px; }
.button { width: 126px; height: 48px; margin: 0; padding: 0; border: 0; border-radius: 6px;
  box-shadow: none; background-image: none; font: 600 14px/48px system-ui, sans-serif; text-align: center; }
.button.primary { background: var(--primary); color: var(--primary-foreground); }
.button.secondary { background: var(--secondary); color: var(--secondary-foreground); }
.button.destructive { background: var(--destructive); color: #fff; }
.button.outline { background: var(--background); color: var(--foreground); border: 1px solid var(--border); }
.panels { display: grid; grid-template-columns: 180px 1fr; gap: 16px; height: 100%; }
.sidebar { background: var(--sidebar); color: var(--sidebar-foreground);
  border: 1px solid var(--sidebar-border); border-radius: 8px; padding: 12px; }
.sidebar p { margin: 0 0 8px; font-weight: 600; }
.sidebar-item { display: block; padding: 6px 8px; border-radius: 6px; margin-bottom: 4px; }
.sidebar-item.active { background: var(--sidebar-primary); color: var(--sidebar-primary-foreground); }
.sidebar-item.hovered { background: var(--sidebar-accent); color: var(--sidebar-accent-foreground); }
.sidebar-item.focused { outline: 2px solid var(--sidebar-ring); outline-offset: -2px; }
.card { background: var(--card); color: var(--card-foreground); border: 1px solid var(--border);
  border-radius: 8px; padding: 12px 16px; display: flex; flex-direction: column; gap: 8px; }
.card h3 { margin: 0; font-size: 16px; }
.card p { margin: 0; }
.muted { background: var(--muted); color: var(--muted-foreground); border-radius: 6px; padding: 4px 8px; }
.input { height: 32px; padding: 0 8px; border: 1px solid var(--input); border-radius: 6px;
  background: var(--background); color: var(--foreground); outline: 2px solid var(--ring); outline-offset: 1px; }
.row { display: flex; gap: 8px; }
.accent { background: var(--accent); color: var(--accent-foreground); border-radius: 6px; padding: 2px 8px; }
.popover { background: var(--popover); color: var(--popover-foreground); border: 1px solid var(--border);
  border-radius: 6px; padding: 2px 8px; }
.chart { display: flex; align-items: flex-end; gap: 8px; height: 96px; border-bottom: 1px solid var(--border); }
.bar { flex: 1; }
.chart-1 { background: var(--chart-1); height: 45%; }
.chart-2 { background: var(--chart-2); height: 70%; }
.chart-3 { background: var(--chart-3); height: 95%; }
.chart-4 { background: var(--chart-4); height: 60%; }
.chart-5 { background: var(--chart-5); height: 80%; }
.swatches { list-style: none; margin: 0; padding: 8px 24px 24px; display: grid;
  grid-template-columns: 1fr 1fr; gap: 8px 16px; }
.swatch { display: grid; grid-template-columns: 36px 1fr; grid-template-rows: auto auto; column-gap: 8px; }
.chip { grid-row: span 2; width: 36px; height: 36px; border-radius: 6px; border: 1px solid var(--border); }
.swatch code { font: 12px/18px ui-monospace, monospace; white-space: nowrap; overflow: hidden; }
"""


def theme_preview(theme: dict[str, dict[str, str]], *, title: str, subtitle: str = "") -> str:
    """Return an HTML page showing a valid theme's 31 colours and sample components in both modes."""
    # Values go into the <style> element unescaped, so only a theme of well-formed values may.
    if validate_theme(theme):
        raise ValueError("not a valid theme")
    sections = "".join(_mode_section(mode, theme[mode]) for mode in MODES)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n"
        f"<style>\n{theme_css(theme)}{_PAGE_CSS}</style>\n"
        "</head>\n<body>\n"
        f'<header class="page-header"><h1>{escape(title)}</h1><p>{escape(subtitle)}</p></header>\n'
        f'<main class="modes">\n{sections}</main>\n'
        "</body>\n</html>\n"
    )


def _mode_section(mode: str, tokens: dict[str, str]) -> str:
    label = mode.capitalize()
    swatches = "".join(_swatch(name, tokens[name]) for name in TOKEN_NAMES)
    return f"""<section class="mode {mode}" id="{mode}" aria-label="{label} mode">
<div class="sample">
<h2>{label}</h2>
<div class="buttons">
<button type="button" class="button primary" id="{mode}-primary-button">Primary</button>
<button type="button" class="button secondary">Secondary</button>
<button type="button" class="button destructive">Destructive</button>
<button type="button" class="button outline">Outline</button>
</div>
<div class="panels">
<nav class="sidebar" aria-label="Sample sidebar">
<p>Workspace</p>
<span class="sidebar-item active">Dashboard</span>
<span class="sidebar-item hovered">Kindness</span>
<span class="sidebar-item focused">Volunteering</span>
<span class="sidebar-item">Reports</span>
</nav>
<div class="card">
<h3>Card</h3>
<p>Card text on the card colour.</p>
<p class="muted">Muted text for secondary details.</p>
<input class="input" type="text" value="Input with focus ring" readonly aria-label="Sample input">
<div class="row"><span class="accent">Accent</span><span class="popover">Popover</span></div>
<div class="chart" role="img" aria-label="Sample chart with the five chart colours">
<span class="bar chart-1"></span><span class="bar chart-2"></span><span class="bar chart-3"></span><span class="bar chart-4"></span><span class="bar chart-5"></span>
</div>
</div>
</div>
</div>
<ul class="swatches">
{swatches}</ul>
</section>
"""


def _swatch(name: str, value: str) -> str:
    name, hex_value, value = escape(name), escape(to_hex(value)), escape(value)
    return (
        f'<li class="swatch"><span class="chip" style="background: var(--{name})"></span>'
        f'<code class="name">--{name}</code><code class="value">{value} · {hex_value}</code></li>\n'
    )
