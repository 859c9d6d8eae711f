"""The theme preview, as served, rendered by headless Chromium: its buttons show the saved colours."""

from __future__ import annotations

import subprocess

import pytest
from PIL import Image

from kindling.platform.database import upgrade
from kindling.themes import generate_theme, to_hex
from kindling.themes.srgb import in_gamut
from tests.helpers import call
from tests.helpers.chromium import FLAGS, chromium
from tests.helpers.contract import Api

# Where the preview's fixed layout puts each mode's primary button (126 x 48 px): the page
# header is 72 px high, the modes are 600 px columns, the buttons row sits 24 px in and 64 px down.
BUTTON_TOP, BUTTON_HEIGHT, BUTTON_WIDTH = 136, 48, 126
BUTTON_LEFT = {"light": 24, "dark": 624}


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))


def assert_close(pixel: tuple[int, ...], expected: tuple[int, int, int], where: str) -> None:
    assert all(abs(a - b) <= 2 for a, b in zip(pixel, expected, strict=False)), (where, pixel, expected)


def screenshot(binary: str, page: str, tmp_path) -> Image.Image:
    html_file, png = tmp_path / "preview.html", tmp_path / "preview.png"
    html_file.write_text(page, encoding="utf-8")
    command = [
        binary,
        *FLAGS,
        "--disable-quic",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--force-color-profile=srgb",
        f"--user-data-dir={tmp_path / 'chromium'}",
        f"--screenshot={png}",
        "--window-size=1200,1600",
        html_file.as_uri(),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and png.exists(), run.stderr[-2000:]
    return Image.open(png).convert("RGB")


@pytest.mark.live
def test_preview_buttons_show_the_saved_primary_colours(fresh_database_url, live_server, tmp_path):
    binary = chromium("render the preview")
    upgrade(fresh_database_url)
    server = live_server(DATABASE_URL=fresh_database_url)
    api = Api(server.url)
    consultant = api.sign_up(email="consultant@render.test", accountType="consultant")
    token = api.sign_up(email="admin@render.test", organizationName="Render Org")
    organization_id = call(server, "GET", "/api/auth/session", token).json()["data"]["user"]["organizationId"]
    api.become_client(consultant, token, organization_id)

    # Distinctive primaries, inside sRGB so that the browser and the engine agree on them.
    theme = generate_theme("#3366ff")
    theme["light"]["primary"], theme["dark"]["primary"] = "0.62 0.17 45", "0.72 0.15 150"
    assert all(in_gamut(theme[mode]["primary"]) for mode in BUTTON_LEFT)
    call(server, "POST", "/api/theme/save", consultant, json={"organizationId": organization_id, "theme": theme})
    page = call(server, "GET", f"/api/theme/{organization_id}/preview", token)
    assert page.headers["content-type"] == "text/html; charset=utf-8"

    image = screenshot(binary, page.text, tmp_path)
    middle = BUTTON_TOP + BUTTON_HEIGHT // 2
    for mode, left in BUTTON_LEFT.items():
        primary, background = rgb(to_hex(theme[mode]["primary"])), rgb(to_hex(theme[mode]["background"]))
        # Left and right of the label, clear of the rounded corners, and the button's middle row.
        for x in (left + 8, left + BUTTON_WIDTH - 9):
            for y in (BUTTON_TOP + 8, middle, BUTTON_TOP + BUTTON_HEIGHT - 9):
                assert_close(image.getpixel((x, y)), primary, f"{mode} primary button at {(x, y)}")
        # Just outside the button is the mode's background: the button is where the test looks.
        assert_close(image.getpixel((left - 4, middle)), background, f"{mode} background beside the button")
