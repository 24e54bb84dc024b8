"""A model's hostile text runs nothing in JupyterLab, streamed or replayed.

``model_text_xss.ipynb`` starts the replay server in the kernel and has it
answer one ``%%chat`` per payload of ``tests/xss_payloads.py`` (the XSS
corpus plus the Markdown-specific attacks: fences in lists and quotes,
reference links, entities, autolinks, raw HTML blocks, setext headings),
each alone and inline, streamed in chunks; the next cell replays them all
as a saved conversation. The notebook is run, so its outputs are trusted
and JupyterLab renders their HTML without a sanitizer: what reaches the
DOM is exactly what the kernel sent.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from e2e_lab import TIMEOUT_MS, LabServer, page_errors, run_notebook
from xss_payloads import MARKDOWN_PAYLOADS, PAYLOADS, XSS_FLAG

PAYLOAD_MODULE = Path(__file__).resolve().parents[1] / "xss_payloads.py"
CORPUS = (*PAYLOADS, *MARKDOWN_PAYLOADS)
CHAT_CELL = 3
REPLAY_CELL = 4
DONE_CELL = 5
LIVE = (
    "script, img, iframe, object, embed, form, input, video, audio, svg, math, "
    "style, link, meta, base, template, marquee, body, source, details, x-y"
)
AUDIT = """(cell, live) => {
    const outputs = [...cell.querySelectorAll('.jp-OutputArea-output')];
    const bad = [];
    for (const out of outputs) {
        for (const el of out.querySelectorAll('*')) {
            for (const attr of el.attributes) {
                const name = attr.name.toLowerCase();
                if (name.startsWith('on') || name === 'style' || name === 'src'
                        || name === 'srcdoc' || name === 'action') {
                    bad.push(`<${el.localName} ${name}>`);
                }
            }
            if (el.localName === 'a' && el.hasAttribute('href')
                    && !['http:', 'https:', 'mailto:'].includes(el.protocol)) {
                bad.push(`<a href=${el.getAttribute('href').slice(0, 60)}>`);
            }
        }
    }
    return {
        outputs: outputs.length,
        trusted: outputs.filter(o => o.classList.contains('jp-mod-trusted')).length,
        html: cell.querySelectorAll('.jp-RenderedHTMLCommon').length,
        markdown: cell.querySelectorAll('.jp-RenderedMarkdown').length,
        links: cell.querySelectorAll('.jp-OutputArea-output a[href]').length,
        live: outputs.flatMap(o => [...o.querySelectorAll(live)])
            .map(e => e.localName),
        bad,
        text: cell.querySelector('.jp-OutputArea').innerText,
    };
}"""


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def test_hostile_model_text_runs_nothing(page: Any, lab_server: LabServer) -> None:
    shutil.copy2(PAYLOAD_MODULE, lab_server.root / PAYLOAD_MODULE.name)
    dialogs: list[str] = []

    def record(dialog: Any) -> None:
        dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", record)
    run_notebook(page, lab_server, "model_text_xss.ipynb")
    done = _cell(page, DONE_CELL).locator(".jp-OutputArea-output")
    done.wait_for(timeout=TIMEOUT_MS * 8)
    assert done.inner_text().strip() == f"{2 * len(CORPUS)} requests"
    # Let a would-be onerror, onload or ontoggle handler fire.
    page.wait_for_timeout(1000)

    chats = _cell(page, CHAT_CELL).evaluate(AUDIT, LIVE)
    replay = _cell(page, REPLAY_CELL).evaluate(AUDIT, LIVE)
    # One reply and one usage line per chat; every reply as trusted HTML.
    assert chats["outputs"] >= 2 * 2 * len(CORPUS)
    assert chats["trusted"] == chats["outputs"]
    assert chats["html"] >= 2 * len(CORPUS) and chats["markdown"] == 0
    assert replay["outputs"] == 2 * len(CORPUS)
    assert replay["html"] == 2 * len(CORPUS)
    for audit in (chats, replay):
        assert audit["live"] == [], audit["live"][:10]
        assert audit["bad"] == [], audit["bad"][:10]
    # The text arrived, readable: raw HTML shows as text.
    assert '<img src=x onerror="window.__dsh_xss=1">' in chats["text"]
    assert chats["links"] > 0  # http(s) links still work
    assert page.evaluate(f"() => typeof window[{XSS_FLAG!r}]") == "undefined"
    assert dialogs == []
    assert page_errors(page) == []
