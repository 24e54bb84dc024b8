"""Images, audio, resources and links on a card (dsh_nb.cards.media)."""

from __future__ import annotations

import re

from dsh_nb.cards import CARD_MIME, CardLimits, CardModel, render_card
from dsh_nb.tools.presentation import GenericResultView

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
SVG = "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"  # <svg onload=alert(1)>


def card(*blocks, limits=None):
    model = CardModel(
        tool="t", status="done", result=GenericResultView(content=list(blocks))
    )
    return render_card(model, limits=limits).data


def test_a_png_is_a_picture_on_the_html_card_and_a_caption_elsewhere():
    data = card(
        {"type": "text", "text": "see:"},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
    )
    html = data["text/html"]
    assert len(re.findall(r"<img\b", html)) == 1
    assert f'src="data:image/png;base64,{PNG}"' in html
    assert "image (image/png, 70 bytes)" in html
    assert PNG not in data["text/markdown"] and PNG not in data["text/plain"]
    assert "[image (image/png, 70 bytes)]" in data["text/plain"]
    (picture,) = [
        b for b in data[CARD_MIME]["result"]["content"] if b["type"] == "image"
    ]
    assert picture == {
        "type": "image",
        "text": "",
        "caption": "image (image/png, 70 bytes)",
        "mimeType": "image/png",
        "data": PNG,
    }


def test_svg_and_bent_data_are_captions_only():
    data = card(
        {"type": "image", "data": SVG, "mimeType": "image/svg+xml"},
        {"type": "image", "data": PNG + '" onerror="x', "mimeType": "image/png"},
        {"type": "image", "data": PNG, "mimeType": 'image/png" onerror="x'},
    )
    html = data["text/html"]
    assert "<img" not in html and 'onerror="x' not in html
    captions = [b["caption"] for b in data[CARD_MIME]["result"]["content"]]
    assert captions[0].endswith("not drawn (only PNG, JPEG, GIF and WebP are)")
    assert captions[1].endswith("not drawn (its data is not base64)")
    assert captions[2].endswith("not drawn (only PNG, JPEG, GIF and WebP are)")
    assert all("data" not in b for b in data[CARD_MIME]["result"]["content"])


def test_links_are_text_and_resources_show_their_text():
    data = card(
        {"type": "resource_link", "uri": "javascript:alert(1)", "name": "<b>go</b>"},
        {
            "type": "resource",
            "resource": {
                "uri": "demo://r/1",
                "mimeType": "text/plain",
                "text": "<script>hi",
            },
        },
        {"type": "resource", "resource": {"uri": "demo://r/2", "blob": "AAAA"}},
        {"type": "audio", "data": "AAAAAA==", "mimeType": "audio/wav"},
    )
    html = data["text/html"]
    assert "<a " not in html and "href" not in html
    assert "link javascript:alert(1) (&lt;b&gt;go&lt;/b&gt;)" in html
    assert "&lt;script&gt;hi" in html and "<script>" not in html
    assert "resource demo://r/2, 3 bytes" in html
    assert "audio (audio/wav, 4 bytes)" in html
    plain = data["text/plain"]
    assert "[resource demo://r/1, text/plain]\n<script>hi" in plain


def test_an_image_over_the_limit_is_not_drawn_and_says_why():
    limits = CardLimits(max_output_chars=50)
    data = card({"type": "image", "data": PNG, "mimeType": "image/png"}, limits=limits)
    assert "<img" not in data["text/html"]
    (block,) = data[CARD_MIME]["result"]["content"]
    assert "data" not in block
    assert block["notice"] == (
        f"image not drawn: {len(PNG):,} characters of base64, over the card's "
        "limit of 50"
    )


def test_blocks_of_other_shapes_still_show_as_json():
    data = card({"type": "image"}, {"type": "resource", "resource": "x"}, {"kind": 1})
    content = data[CARD_MIME]["result"]["content"]
    assert content == [
        {"type": "image"},
        {"type": "resource", "resource": "x"},
        {"kind": 1},
    ]
    assert "&quot;type&quot;: &quot;image&quot;" in data["text/html"]
