"""MCP's images, audio, resources and links on a card in JupyterLab.

The kernel's card draws a PNG as a picture and the rest as captions; a
stored payload that claims an SVG, a quote in the data or a bent type
draws no picture, and nothing on the page becomes a link or runs script.
A title is drawn as the kernel resolved it (relative to the cwd).
"""

from __future__ import annotations

from typing import Any

from e2e_lab import TIMEOUT_MS, LabServer, page_errors, run_notebook

IMG = '<img src=x onerror="window.__dsh_xss=1">'
SCRIPT = "<script>window.__dsh_xss=1</script>"


def test_media_blocks_draw_one_picture_and_captions(
    page: Any, lab_server: LabServer
) -> None:
    run_notebook(page, lab_server, "media.ipynb")
    cards = page.locator(".dsh-ToolCard")
    cards.nth(2).wait_for(timeout=TIMEOUT_MS)
    page.wait_for_timeout(500)  # time for a would-be onload/onerror to fire
    assert cards.count() == 3
    kernel, forged = cards.nth(0), cards.nth(1)

    pictures = page.locator(".jp-OutputArea-output img")
    assert pictures.count() == 1
    picture = kernel.locator("img.dsh-ToolCard-image")
    assert picture.get_attribute("src").startswith("data:image/png;base64,iVBOR")
    # It really decoded: a 1x1 PNG.
    assert picture.evaluate("img => img.complete && img.naturalWidth") == 1

    captions = kernel.locator(".dsh-ToolCard-caption").all_inner_texts()
    assert captions == [
        "image (image/png, 70 bytes)",
        "image (image/svg+xml, 69 bytes): not drawn (only PNG, JPEG, GIF and WebP are)",
        f"link javascript:window.__dsh_xss=1 ({IMG})",
        "resource demo://r/1",
        "audio (audio/wav, 3 bytes)",
    ]
    assert SCRIPT in kernel.inner_text()  # the resource's text, as text

    assert forged.locator(".dsh-ToolCard-caption").all_inner_texts() == [
        IMG,
        "quote",
        "mime",
        SCRIPT,
    ]
    assert forged.locator("img, svg image, object, embed, iframe").count() == 0
    outputs = page.locator(".jp-OutputArea-output")
    assert outputs.locator("a[href^='javascript'], script").count() == 0
    assert page.evaluate("() => typeof window.__dsh_xss") == "undefined"
    assert page_errors(page) == []

    # The title the kernel made relative to the session's folder, exactly
    # as the text/html card shows it.
    title = cards.nth(2).locator(".dsh-ToolCard-title").inner_text()
    assert title == "Read src/a.py"
