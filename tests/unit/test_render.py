"""Cards as rich outputs: the MIME bundle of ``render_card`` and its parts."""

from __future__ import annotations

import difflib
import itertools
import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_nb.cards import (
    CARD_MIME,
    CardLimits,
    CardModel,
    ToolCard,
    TraceEntry,
    markup,
    render_card,
)
from dsh_nb.cards import bundle as render
from dsh_nb.cards import linematch as _match
from dsh_nb.cards.ansi import ansi_to_html_lines, strip_ansi
from dsh_nb.cards.cardtext import fence, md_inline
from dsh_nb.cards.escape import visible
from dsh_nb.cards.hunks import Gap, Hunk, Skip, looks_binary, plan_diffs
from dsh_nb.cards.linematch import AnchoredMatcher
from dsh_nb.tools.presentation import (
    DiffCallView,
    DiffResultView,
    FileDiff,
    FileLocation,
    GenericCallView,
    GenericResultView,
    TerminalCallView,
    TerminalResultView,
)

STATUSES = [
    "pending",
    "awaiting-approval",
    "running",
    "done",
    "denied",
    "error",
    "timed-out",
    "cancelled",
]
GREEN = markup.PILL["ok"]  # labels: white on a solid colour
RED = markup.PILL["err"]


class Page(HTMLParser):
    """Collect an HTML part's text, tags and ``class`` values."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tags: list[str] = []
        self.classes: list[str] = []
        self.feed(html.replace(markup.THEME_STYLE, ""))  # a constant, not text
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.classes.extend((v or "") for k, v in attrs if k == "class")

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def content(self) -> str:
        return "".join(self.text)


def generic_model(**kw: Any) -> CardModel:
    base: dict[str, Any] = {
        "tool": "add",
        "call_id": "c1",
        "call": GenericCallView(title="add", raw_input={"a": 1, "b": 2}),
        "result": GenericResultView(content=[{"type": "text", "text": "3"}]),
    }
    base.update(kw)
    return CardModel(**base)


def terminal_model(output: str | None = "hi\n", **result: Any) -> CardModel:
    return CardModel(
        tool="bash",
        call=TerminalCallView(title="echo hi", description="Say hi", cwd="/w"),
        result=TerminalResultView(output=output, **result),
    )


def diff_model(old: str | None, new: str, **kw: Any) -> CardModel:
    return CardModel(
        tool="edit",
        result=DiffResultView(
            diffs=[FileDiff(path="/p/f.txt", old_text=old, new_text=new)]
        ),
        **kw,
    )


def html_of(obj: Any, **kw: Any) -> str:
    html: str = render_card(obj, **kw).data["text/html"]
    return html


MD_OPEN = '<div class="mathjax_ignore tex2jax_ignore">\n\n'
MD_CLOSE = "\n\n</div>\n"


def lines(n: int, fmt: str = "line {}") -> str:
    return "".join(fmt.format(i) + "\n" for i in range(1, n + 1))


# ------------------------------------------------------------ bundle shape


def test_bundle_has_every_part_and_plain_summary() -> None:
    card = render_card(generic_model())
    assert list(card.data) == [CARD_MIME, "text/html", "text/markdown", "text/plain"]
    assert card.data["text/plain"] == "[done] add \u2014 3"
    assert repr(card) == "[done] add \u2014 3"
    assert render.CARD_MIME == "application/vnd.dsh.tool-card+json"


def test_json_payload_uses_wire_names_and_omits_absent_keys() -> None:
    model = generic_model(
        approval="allowed-once",
        cwd="/srv",
        is_error=True,
        trace=(
            TraceEntry(
                stage="approval", actor="m.ask", decision="allow", duration_ms=3
            ),
        ),
    )
    assert render_card(model).data[CARD_MIME] == {
        "tool": "add",
        "callId": "c1",
        "status": "done",
        "isError": True,
        "title": "add",
        "call": {"card": "generic", "title": "add", "rawInput": {"a": 1, "b": 2}},
        "result": {"card": "generic", "content": [{"type": "text", "text": "3"}]},
        "approval": "allowed-once",
        "trace": [{"stage": "approval", "actor": "m.ask", "decision": "allow"}],
    }
    # The working folder differs per machine: metadata, never compared data.
    assert render_card(model).metadata[CARD_MIME]["cwd"] == "/srv"
    bare = render_card(CardModel(tool="t")).data[CARD_MIME]
    assert bare == {"tool": "t", "status": "done", "isError": False, "title": "t"}


def test_terminal_and_diff_payloads_carry_parsed_output_and_hunks() -> None:
    term = render_card(terminal_model("\x1b[31mred\x1b[0m ok\n", exit_code=2))
    assert term.data[CARD_MIME]["result"] == {
        "card": "terminal",
        "exitCode": 2,
        "outputSpans": [["red", 1], [" ok\n", 0]],
        "outputStyles": [{}, {"fg": "#e75c58"}],
    }
    diff = render_card(diff_model(None, "x\n")).data[CARD_MIME]
    assert diff["result"]["diffs"] == [
        {
            "path": "/p/f.txt",
            "newFile": True,
            "added": 1,
            "removed": 0,
            "rows": 1,
            "shown": 1,
            "hunks": [
                {
                    "header": "@@ -0,0 +1 @@",
                    "oldStart": 1,
                    "newStart": 1,
                    "lines": ["+x"],
                }
            ],
        }
    ]


def test_a_completed_call_drops_the_pending_content_from_the_payload() -> None:
    diff = [FileDiff(path="/p/f.txt", old_text="a\n", new_text="b\n")]
    model = CardModel(
        tool="edit",
        call=DiffCallView(title="Edit f.txt", diffs=diff),
        result=DiffResultView(diffs=diff),
    )
    payload = render_card(model).data[CARD_MIME]
    assert payload["call"] == {"card": "diff", "title": "Edit f.txt"}
    assert len(payload["result"]["diffs"]) == 1
    pending = render_card(CardModel(tool="edit", status="pending", call=model.call))
    assert pending.data[CARD_MIME]["call"]["diffs"][0]["hunks"][0]["lines"] == [
        "-a",
        "+b",
    ]
    generic = CardModel(
        tool="t",
        call=GenericCallView(
            title="t", raw_input={"q": 1}, content=[{"type": "text", "text": "asking"}]
        ),
        result=GenericResultView(content=[{"type": "text", "text": "answer"}]),
    )
    payload = render_card(generic).data[CARD_MIME]
    assert "content" not in payload["call"] and payload["call"]["rawInput"] == {"q": 1}
    assert payload["result"]["content"] == [{"type": "text", "text": "answer"}]
    assert "asking" not in render_card(generic).data["text/html"]


def test_volatile_values_go_to_metadata_only() -> None:
    trace = (
        TraceEntry(stage="pre-execute", actor="a", decision="allow", duration_ms=1.25),
        TraceEntry(stage="execute", actor="b", decision="allow"),
    )
    card = render_card(generic_model(trace=trace, meta={"startedAt": "12:00:01"}))
    assert card.metadata == {
        CARD_MIME: {"meta": {"startedAt": "12:00:01"}, "traceDurationsMs": [1.25, None]}
    }
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert "12:00:01" not in card.data[mime]
        assert "1.25" not in card.data[mime]
    assert "1.25" not in json.dumps(card.data[CARD_MIME])
    assert render_card(generic_model()).metadata == {}


@pytest.mark.parametrize(
    "model",
    [
        generic_model(trace=(TraceEntry(stage="s", actor="a", decision="allow"),)),
        terminal_model("\x1b[31mred\x1b[0m\n" * 100, exit_code=1),
        diff_model(lines(300), lines(300).replace("line 150", "changed")),
    ],
    ids=["generic", "terminal", "diff"],
)
def test_same_model_renders_byte_identical(model: CardModel) -> None:
    first = json.dumps(render_card(model).data, sort_keys=True)
    assert json.dumps(render_card(model).data, sort_keys=True) == first


def test_ids_and_durations_never_reach_the_drawn_parts() -> None:
    one = generic_model(call_id="call-1", meta={"id": 1})
    two = generic_model(
        call_id="call-2",
        meta={"id": 2},
        trace=(),
    )
    for mime in ("text/html", "text/markdown", "text/plain"):
        assert render_card(one).data[mime] == render_card(two).data[mime]
    assert "call-1" not in render_card(one).data["text/html"]


def test_mimebundle_honours_include_and_exclude() -> None:
    card = render_card(generic_model(meta={"x": 1}))
    data, meta = card._repr_mimebundle_(include={CARD_MIME, "text/plain"})
    assert set(data) == {CARD_MIME, "text/plain"}
    assert set(meta) == {CARD_MIME}
    data, meta = card._repr_mimebundle_(exclude=[CARD_MIME])
    assert CARD_MIME not in data and meta == {}
    card.data.clear()
    assert CARD_MIME in card.data


# ------------------------------------------------------------ inputs


def test_call_view_alone_is_pending_and_result_view_alone_is_done() -> None:
    pending = render_card(GenericCallView(title="look", raw_input="q"))
    assert pending.data[CARD_MIME]["status"] == "pending"
    assert pending.data[CARD_MIME]["tool"] == ""
    assert pending.data["text/plain"] == "[pending] look \u2014 q"
    done = render_card(TerminalResultView(output="ok\n", exit_code=0))
    assert done.data[CARD_MIME]["status"] == "done"
    assert "exit 0" in done.data["text/plain"]


def test_render_card_rejects_other_objects_naming_them() -> None:
    with pytest.raises(TypeError, match=r"CardModel, a call view or a result view.*42"):
        render_card(42)
    with pytest.raises(TypeError, match="CardLimits"):
        render_card(generic_model(), limits={"max_output_lines": 3})  # type: ignore[arg-type]


def test_model_validates_status_views_and_trace() -> None:
    with pytest.raises(ValueError, match="did you mean 'done'"):
        CardModel(tool="t", status="don")
    with pytest.raises(TypeError, match="call view"):
        CardModel(tool="t", call=GenericResultView())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="result view"):
        CardModel(tool="t", result=GenericCallView(title="x"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="TraceEntry"):
        CardModel(tool="t", trace=({"stage": "x"},))  # type: ignore[arg-type]
    assert CardModel(tool="t", trace=[]).trace == ()  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["max_output_lines", "max_diff_bytes"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_limits_must_be_positive_ints(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=f"CardLimits.{field} must be a positive int"):
        CardLimits(**{field: value})


# ------------------------------------------------------------ statuses


@pytest.mark.parametrize("status", STATUSES)
def test_each_status_sets_root_class_and_badge(status: str) -> None:
    html = html_of(generic_model(status=status))
    assert html.startswith(
        f'<div class="dsh-ToolCard dsh-mod-{status} mathjax_ignore tex2jax_ignore" '
    )
    page = Page(html)
    assert "dsh-ToolCard-status" in page.classes
    assert status in page.text
    assert (
        render_card(generic_model(status=status))
        .data["text/plain"]
        .startswith(f"[{status}] add")
    )


def test_error_result_is_flagged_red() -> None:
    card = render_card(generic_model(is_error=True))
    assert f"border-left:3px solid {markup.ERR}" in card.data["text/html"]
    assert card.data["text/plain"].startswith("[done, error] add")


def test_approval_and_trace_are_shown() -> None:
    trace = (
        TraceEntry(stage="pre-execute", actor="pkg.gate", decision="deny: too big"),
        TraceEntry(stage="approval", actor="pkg.ask", decision="allow"),
    )
    page = Page(html_of(generic_model(approval="rejected", trace=trace)))
    assert "approval: rejected" in page.text
    assert "trace (2)" in page.text
    assert "dsh-ToolCard-trace" in page.classes
    assert ["pre-execute", "pkg.gate", "deny: too big"] == page.text[
        page.text.index("pre-execute") : page.text.index("pre-execute") + 3
    ]


# ------------------------------------------------------------ generic card


@pytest.mark.parametrize(
    ("kind", "icon"),
    [
        ("read", "\u2630"),
        ("edit", "\u270e"),
        ("delete", "\u2716"),
        ("move", "\u21c4"),
        ("search", "\u26b2"),
        ("execute", "\u25b6"),
        ("fetch", "\u2913"),
        ("other", "\u25c6"),
        (None, "\u25c6"),
    ],
)
def test_generic_card_icon_follows_kind(kind: Any, icon: str) -> None:
    page = Page(html_of(GenericCallView(title="t", kind=kind)))
    assert page.text[0] == icon


def test_generic_card_shows_input_content_and_locations() -> None:
    model = CardModel(
        tool="grep",
        call=GenericCallView(
            title="Search",
            raw_input={"pattern": "a<b", "n": [1, 2]},
            locations=[FileLocation(path="/r/a.py", line=7), FileLocation(path="/r/b")],
        ),
        result=GenericResultView(
            content=[
                {"type": "text", "text": "first\nsecond"},
                {"type": "image", "data": "AA"},
            ]
        ),
    )
    html = html_of(model)
    page = Page(html)
    assert "/r/a.py:7" in page.text and "/r/b" in page.text
    assert '{\n  "pattern": "a<b",\n  "n": [\n    1,\n    2\n  ]\n}' in page.content
    assert "\nfirst\nsecond" in page.text
    # An image block gets a caption, not a wall of base64 (cards.media).
    assert "image (unknown type, 1 byte): not drawn" in page.content
    assert '"data": "AA"' not in page.content
    assert '<details class="dsh-ToolCard-input"' in html
    assert "grep" in page.text  # the tool name, since it differs from the title


def test_string_raw_input_is_shown_as_is() -> None:
    page = Page(html_of(GenericCallView(title="t", raw_input='say "hi"')))
    assert '\nsay "hi"' in page.text


def test_pending_generic_shows_call_content_and_result_replaces_it() -> None:
    call = GenericCallView(
        title="t", content=[{"type": "text", "text": "pending text"}]
    )
    assert "pending text" in html_of(call)
    done = CardModel(tool="t", call=call, result=GenericResultView(content=[]))
    assert "pending text" not in html_of(done)


def test_content_blocks_are_capped_with_a_notice() -> None:
    model = generic_model(
        result=GenericResultView(content=[{"type": "text", "text": "x" * 50}])
    )
    card = render_card(model, limits=CardLimits(max_output_chars=10))
    assert "\n" + "x" * 10 + "<" in card.data["text/html"]
    assert "truncated: 40 of 50 characters not shown" in card.data["text/html"]


def test_title_is_relativized_for_file_cards_only() -> None:
    generic = CardModel(
        tool="read",
        cwd="/srv/proj",
        call=GenericCallView(
            title="Read /srv/proj/src/a.py",
            locations=[FileLocation(path="/srv/proj/src/a.py")],
        ),
    )
    assert Page(html_of(generic)).text[1] == "Read src/a.py"
    diff = CardModel(
        tool="edit",
        cwd="/srv/proj",
        call=DiffCallView(
            title="Edit /srv/proj/b.py",
            diffs=[FileDiff(path="/srv/proj/b.py", old_text="a\n", new_text="b\n")],
        ),
    )
    assert Page(html_of(diff)).text[1] == "Edit b.py"
    result = CardModel(
        tool="edit",
        cwd="/srv/proj",
        result=DiffResultView(
            title="Edited /srv/proj/b.py",
            diffs=[FileDiff(path="/srv/proj/b.py", old_text="a\n", new_text="b\n")],
        ),
    )
    assert Page(html_of(result)).text[1] == "Edited b.py"
    # The JSON part carries the same title, so the labextension draws it too.
    for model in (generic, diff, result):
        data = render_card(model).data
        assert data[CARD_MIME]["title"] == Page(data["text/html"]).text[1]
    term = CardModel(
        tool="bash", cwd="/srv/proj", call=TerminalCallView(title="cat /srv/proj/x")
    )
    assert Page(html_of(term)).text[1] == "cat /srv/proj/x"


# ------------------------------------------------------------ terminal card


def test_terminal_card_shows_command_description_cwd_and_output() -> None:
    page = Page(html_of(terminal_model("\x1b[32mok\x1b[0m done\n", exit_code=0)))
    assert page.text[1] == "echo hi"
    assert "Say hi" in page.text
    assert "cwd: /w" in page.text
    assert "dsh-ToolCard-output" in page.classes
    assert "\nok done" in page.content
    html = html_of(terminal_model("\x1b[32mok\x1b[0m done\n", exit_code=0))
    assert '<span style="color:#00a250">ok</span> done</pre>' in html


@pytest.mark.parametrize(
    ("view_cwd", "session", "shown"),
    [
        ("/abs", "/srv", "/abs"),
        ("sub/dir", "/srv", "sub/dir"),
        ("./sub//dir/", "/srv", "sub/dir"),
        ("/srv/sub", "/srv", "sub"),
        ("/srv", "/srv", "."),
        ("/srvx/a", "/srv", "/srvx/a"),
        ("../up", "/srv/p", "/srv/up"),
        ("rel", None, "rel"),
        (None, "/srv", "/srv"),
        ("src", "C:\\work", "src"),
        ("..\\up", "C:\\work\\p", "C:\\work\\up"),
    ],
)
def test_terminal_cwd_is_shown_relative_to_the_session(
    view_cwd: str | None, session: str | None, shown: str
) -> None:
    model = CardModel(
        tool="b", cwd=session, call=TerminalCallView(title="ls", cwd=view_cwd)
    )
    assert f"cwd: {shown}" in Page(html_of(model)).text


@pytest.mark.parametrize(
    ("result", "label", "colour"),
    [
        ({"exit_code": 0}, "exit 0", GREEN),
        ({"exit_code": 1}, "exit 1", RED),
        ({"exit_code": 127}, "exit 127", RED),
        ({"signal": "SIGTERM"}, "SIGTERM", RED),
        ({"signal": "KILL"}, "SIGKILL", RED),
        ({"signal": "9"}, "SIGKILL", RED),
        ({"exit_code": -15}, "SIGTERM (exit -15)", RED),
        ({"signal": "SIGINT", "exit_code": 0}, "SIGINT", RED),
    ],
)
def test_exit_pill_colour_and_signal_name(
    result: dict[str, Any], label: str, colour: str
) -> None:
    html = html_of(terminal_model(**result))
    pill = re.search(
        r'<span class="dsh-ToolCard-exit" style="([^"]*)">([^<]*)</span>', html
    )
    assert pill is not None
    assert pill.group(2) == label
    assert f"background:{colour}" in pill.group(1)
    assert f"({label})" in render_card(terminal_model(**result)).data["text/plain"]


def test_pending_terminal_has_no_output_or_pill() -> None:
    model = CardModel(
        tool="bash", status="running", call=TerminalCallView(title="make")
    )
    html = html_of(model)
    assert "dsh-ToolCard-exit" not in html and "dsh-ToolCard-output" not in html


def test_empty_output_says_so() -> None:
    assert "(no output)" in Page(html_of(terminal_model(""))).text


def test_long_output_collapses_behind_show_all() -> None:
    output = lines(100)
    card = render_card(terminal_model(output), limits=CardLimits(max_output_lines=10))
    html = card.data["text/html"]
    page = Page(html)
    assert "show all 100 lines (90 earlier lines hidden)" in page.text
    more = html.index('<details class="dsh-ToolCard-more"')
    hidden = html[more : html.index("</details>", more)]
    assert "line 90</pre>" in hidden and "line 91" not in hidden
    visible_part = html[html.index("</details>", more) :]
    assert visible_part.count("line ") == 10 and "line 100</pre>" in visible_part
    plain = card.data["text/plain"]
    assert "\u2026 90 earlier lines not shown" in plain and plain.endswith("line 100")


def test_short_output_is_not_collapsed() -> None:
    html = html_of(terminal_model(lines(40)))
    assert "dsh-ToolCard-more" not in html


def test_huge_output_keeps_the_tail_with_a_notice() -> None:
    output = "".join(f"{i:09d}\n" for i in range(1000))
    card = render_card(terminal_model(output), limits=CardLimits(max_output_chars=100))
    html = card.data["text/html"]
    assert (
        "output truncated: the first 9,900 of 10,000 characters are not shown" in html
    )
    assert "000000999" in html and "000000989" not in html
    assert "output truncated" in card.data["text/markdown"]


# ------------------------------------------------------------ ANSI


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("\x1b[31mr\x1b[0m", '<span style="color:#e75c58">r</span>'),
        ("\x1b[91mr", '<span style="color:#b22b31">r</span>'),
        ("\x1b[44mb", '<span style="background-color:#208ffb">b</span>'),
        ("\x1b[104mb", '<span style="background-color:#0065ca">b</span>'),
        ("\x1b[38;5;196mx", '<span style="color:#ff0000">x</span>'),
        ("\x1b[38;5;244mx", '<span style="color:#808080">x</span>'),
        ("\x1b[38;5;3mx", '<span style="color:#ddb62b">x</span>'),
        ("\x1b[48;5;21mx", '<span style="background-color:#0000ff">x</span>'),
        ("\x1b[38;2;1;2;300mx", '<span style="color:#0102ff">x</span>'),
        ("\x1b[38:2::10:20:30mx", '<span style="color:#0a141e">x</span>'),
        ("\x1b[38:5:46mx", '<span style="color:#00ff00">x</span>'),
        (
            "\x1b[1;3;4mx",
            '<span style="font-weight:bold;font-style:italic;'
            'text-decoration:underline">x</span>',
        ),
        (
            "\x1b[2;9mx",
            '<span style="opacity:0.7;text-decoration:line-through">x</span>',
        ),
        ("\x1b[1mb\x1b[22mn", '<span style="font-weight:bold">b</span>n'),
        ("\x1b[31mr\x1b[39mn", '<span style="color:#e75c58">r</span>n'),
        (
            "\x1b[31;1mr\x1b[mn",
            '<span style="color:#e75c58;font-weight:bold">r</span>n',
        ),
        (
            "\x1b[7mi",
            f'<span style="color:{markup.BG};background-color:{markup.FG}">i</span>',
        ),
        ("\x1b[38;5;999mx\x1b[38;2;1mx", "xx"),
        ("\x1b[?25lx\x1b[>4;2my", "xy"),
        ("a\x1b[2J\x1b[1;1H\x1b[Kb\x1b[3Ac", "abc"),
        ("\x1b]8;;https://e.x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x1b]8;;javascript:alert(1)\x07js\x1b]8;;\x07", "js"),
        ("\x1b]0;title\x07text", "text"),
        ("\x1bPdata\x1b\\after", "after"),
        ("\x1b(Bx\x1b=y\x1b7z", "xyz"),
        ("a\x00b\x07c\x08d\x7fe\x85f", "abcdef"),
        ("tab\there", "tab\there"),
        ("<b>&amp;\"'</b>", "&lt;b&gt;&amp;amp;&quot;&#x27;&lt;/b&gt;"),
        ("x\x1b", "x"),
        ("x\x1b[", "x"),
        ("x\x1b]8;;unterminated", "x8;;unterminated"),
    ],
)
def test_ansi_conversion(text: str, html: str) -> None:
    assert ansi_to_html_lines(text) == [html]


def test_ansi_styles_carry_across_lines_but_spans_close_per_line() -> None:
    assert ansi_to_html_lines("\x1b[31ma\nb\x1b[0m\nc") == [
        '<span style="color:#e75c58">a</span>',
        '<span style="color:#e75c58">b</span>',
        "c",
    ]


def test_carriage_return_keeps_the_last_write_and_its_style() -> None:
    assert strip_ansi("10%\r50%\r100%\nnext\r\n") == "100%\nnext\n"
    assert ansi_to_html_lines("\x1b[32m10%\r100%") == [
        '<span style="color:#00a250">100%</span>'
    ]


def test_adjacent_runs_with_one_style_share_a_span() -> None:
    assert ansi_to_html_lines("\x1b[31ma\x1b[Kb\x1b[31mc") == [
        '<span style="color:#e75c58">abc</span>'
    ]


# ------------------------------------------------------------ diff card


def test_diff_rows_have_numbers_hunk_headers_and_three_lines_of_context() -> None:
    old = lines(20)
    new = old.replace("line 10\n", "line ten\n")
    (plan,) = plan_diffs([FileDiff(path="f", old_text=old, new_text=new)], CardLimits())
    gap1, hunk, gap2 = plan.blocks
    assert isinstance(gap1, Gap) and (gap1.count, gap1.old_start) == (6, 0)
    assert isinstance(hunk, Hunk) and hunk.header == "@@ -7,7 +7,7 @@"
    assert [(k, o, n, t) for k, o, n, t, _ in hunk.rows] == [  # type: ignore[misc]
        (" ", 7, 7, "line 7"),
        (" ", 8, 8, "line 8"),
        (" ", 9, 9, "line 9"),
        ("-", 10, 0, "line 10"),
        ("+", 0, 10, "line ten"),
        (" ", 11, 11, "line 11"),
        (" ", 12, 12, "line 12"),
        (" ", 13, 13, "line 13"),
    ]
    assert isinstance(gap2, Gap) and gap2.count == 7
    assert (plan.added, plan.removed) == (1, 1)


def test_diff_html_counts_unchanged_regions_and_colours_rows() -> None:
    old = lines(20)
    html = html_of(diff_model(old, old.replace("line 10\n", "line ten\n")))
    page = Page(html)
    assert "@@ -7,7 +7,7 @@  \u22ef 6 unchanged lines" in page.text
    assert "\u22ef 7 unchanged lines" in page.text
    assert "<details" not in html
    assert 'rgba(248, 81, 73, 0.18)">-line 10</span>' in html
    assert 'rgba(46, 160, 67, 0.18)">+line ten</span>' in html
    assert "\n\n7\n8\n9\n10\n\n11\n" in page.content  # old numbers column
    assert "+1" in page.text and "\u22121" in page.text


def test_separate_hunks_when_changes_are_far_apart() -> None:
    old = lines(40)
    new = old.replace("line 5\n", "five\n").replace("line 30\n", "thirty\n")
    plan = plan_diffs([FileDiff(path="f", old_text=old, new_text=new)], CardLimits())[0]
    headers = [b.header for b in plan.blocks if isinstance(b, Hunk)]
    assert headers == ["@@ -2,7 +2,7 @@", "@@ -27,7 +27,7 @@"]
    near = old.replace("line 5\n", "five\n").replace("line 11\n", "eleven\n")
    plan = plan_diffs([FileDiff(path="f", old_text=old, new_text=near)], CardLimits())[
        0
    ]
    assert [b.header for b in plan.blocks if isinstance(b, Hunk)] == [
        "@@ -2,13 +2,13 @@"
    ]


def test_new_file_is_all_added() -> None:
    card = render_card(diff_model(None, "a\nb\n"))
    assert "@@ -0,0 +1,2 @@" in card.data["text/html"]
    assert "new file" in Page(card.data["text/html"]).text
    assert (
        "--- /dev/null\n+++ /p/f.txt\n@@ -0,0 +1,2 @@\n+a\n+b"
        in card.data["text/markdown"]
    )


def test_uniform_crlf_is_shown_once_not_per_line() -> None:
    card = render_card(diff_model("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"))
    html = card.data["text/html"]
    assert "CRLF" in Page(html).text and "^M" not in html
    assert "\r" not in html and "\r" not in card.data["text/markdown"]
    assert "-b\n+B\n" in card.data["text/markdown"]


def test_mixed_line_endings_mark_the_cr() -> None:
    card = render_card(diff_model("a\r\nb\n", "a\nb\n"))
    html = card.data["text/html"]
    assert f'-a<span style="color:{markup.FG_MUTED}">^M</span>' in html
    assert "\r" not in html


def test_missing_final_newline_is_marked_only_where_the_sides_differ() -> None:
    both = render_card(diff_model("a\nb", "a\nc"))
    assert "-b\n+c\n```" in both.data["text/markdown"]
    assert "No newline" not in both.data["text/html"]
    assert "No newline" not in json.dumps(both.data[CARD_MIME])
    ok = render_card(diff_model("a\nb", "a\nb\n"))
    assert "-b\n\\ No newline at end of file\n+b\n```" in ok.data["text/markdown"]
    assert "\\ No newline at end of file" in Page(ok.data["text/html"]).text
    lines_json = ok.data[CARD_MIME]["result"]["diffs"][0]["hunks"][0]["lines"]
    assert lines_json == [" a", "-b", "\\ No newline at end of file", "+b"]
    same_tail = render_card(diff_model("x\na\nb", "y\na\nb")).data["text/markdown"]
    assert " b\n```" in same_tail and "No newline" not in same_tail
    new_file = render_card(diff_model(None, "x")).data["text/markdown"]
    assert "No newline" not in new_file


@pytest.mark.parametrize(
    "text", ["\x00\x01\x02abc", "a" * 100 + "\x00", "\x01\x02\x03\x04" * 10 + "text"]
)
def test_binary_content_is_not_shown(text: str) -> None:
    card = render_card(diff_model("old\n", text))
    size = len(text.encode())
    assert (
        f"binary content, {size:,} bytes, not shown"
        in Page(card.data["text/html"]).text
    )
    assert "abc" not in card.data["text/html"]


def test_text_with_ansi_and_tabs_is_not_binary() -> None:
    assert not looks_binary("\x1b[31mred\x1b[0m\tcol\r\n" * 20)
    assert not looks_binary("")


def test_too_large_file_is_not_diffed() -> None:
    card = render_card(
        diff_model("a\n" * 100, "b\n" * 100), limits=CardLimits(max_diff_bytes=150)
    )
    assert (
        "too large to diff: 200 bytes (limit 150 bytes per file)"
        in card.data["text/html"]
    )


def test_a_truncated_rewrite_shows_the_start_of_both_sides() -> None:
    old = lines(100)
    new = lines(100, "new {}")
    card = render_card(diff_model(old, new), limits=CardLimits(max_diff_lines=50))
    html = card.data["text/html"]
    assert "diff truncated: 50 of 200 rows shown (limit 50 rows per card)" in html
    assert html.count("-line ") == 25 and html.count("+new ") == 25
    assert Page(html).text.count("\u22ef 75 more rows") == 2
    assert "diff truncated" in card.data["text/markdown"]
    hunk = card.data[CARD_MIME]["result"]["diffs"][0]["hunks"][0]
    assert hunk["lines"][25] == {"more": 75, "old": 75, "new": 0}
    assert hunk["lines"][-1] == {"more": 75, "old": 0, "new": 75}
    assert hunk["lines"][26] == "+new 1"


def test_every_hunk_shows_its_start_when_the_card_is_over_its_limit() -> None:
    old = lines(400)
    new = old
    for k in range(1, 400, 40):
        new = new.replace(f"line {k}\n", f"edit {k}\n")
    (plan,) = plan_diffs(
        [FileDiff(path="f", old_text=old, new_text=new)], CardLimits(max_diff_lines=40)
    )
    hunks = plan.hunks()
    assert len(hunks) == 10 and 30 <= plan.shown <= 40
    for hunk in hunks:
        kinds = [r[0] for r in hunk.rows if not isinstance(r, Skip)]
        assert "-" in kinds and "+" in kinds
        assert isinstance(hunk.rows[-1], Skip)


def test_row_budget_is_shared_by_the_files_of_a_card() -> None:
    diffs = [
        FileDiff(path=f"f{i}", old_text=None, new_text=lines(30)) for i in range(3)
    ]
    plans = plan_diffs(diffs, CardLimits(max_diff_lines=50))
    assert [p.shown for p in plans] == [16, 17, 17]
    assert (
        plans[0].truncated
        == "diff truncated: 16 of 30 rows shown (limit 50 rows per card)"
    )


def test_unchanged_regions_show_only_a_count() -> None:
    old = lines(200)
    new = old.replace("line 100\n", "changed\n")
    card = render_card(diff_model(old, new), limits=CardLimits(max_diff_lines=100))
    text = " ".join(Page(card.data["text/html"]).text)
    assert "@@ -97,7 +97,7 @@  \u22ef 96 unchanged lines" in text
    assert "\u22ef 97 unchanged lines" in text
    diff = card.data[CARD_MIME]["result"]["diffs"][0]
    assert diff["hunks"][0]["gap"] == 96 and diff["after"] == 97


def test_identical_and_empty_files() -> None:
    assert "no changes" in Page(html_of(diff_model("a\n", "a\n"))).text
    assert "empty file" in Page(html_of(diff_model(None, ""))).text
    empty = CardModel(tool="e", result=DiffResultView(diffs=[]))
    assert "no file changes" in Page(html_of(empty)).text


def test_multiple_files_each_get_a_block() -> None:
    model = CardModel(
        tool="edit",
        call=DiffCallView(
            title="two",
            diffs=[
                FileDiff(path="a.txt", old_text="1\n", new_text="2\n"),
                FileDiff(path="b.txt", old_text=None, new_text="x\n"),
            ],
        ),
    )
    card = render_card(model)
    assert card.data["text/html"].count('class="dsh-ToolCard-diff"') == 2
    assert (
        "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-1\n+2\n--- /dev/null\n+++ b.txt"
        in (card.data["text/markdown"])
    )


line_lists = st.lists(
    st.sampled_from(["a\n", "b\n", "c\n", "d\n", "}\n", "\n", "x"]), max_size=40
)


@given(line_lists, line_lists)
def test_planned_rows_and_gaps_cover_both_sides(a: list[str], b: list[str]) -> None:
    old, new = "".join(a), "".join(b)
    (plan,) = plan_diffs([FileDiff(path="f", old_text=old, new_text=new)], CardLimits())
    if plan.skipped:
        assert old == new or not new
        return
    olds: list[tuple[int, str | None]] = []
    news: list[tuple[int, str | None]] = []
    for block in plan.blocks:
        if isinstance(block, Gap):
            olds += [(block.old_start + k + 1, None) for k in range(block.count)]
            news += [(block.new_start + k + 1, None) for k in range(block.count)]
            continue
        for row in block.rows:
            assert not isinstance(row, Skip)
            kind, o, n, t, _ = row
            if kind in " -":
                olds.append((o, t))
            if kind in " +":
                news.append((n, t))
    for got, text in ((olds, old), (news, new)):
        want = [x.rstrip("\n") for x in text.splitlines(True)]
        assert [i for i, _ in got] == list(range(1, len(want) + 1))
        assert all(t is None or t == want[i - 1] for i, t in got)


@given(line_lists, line_lists, st.integers(1, 30))
def test_truncation_counts_every_hunk_row(
    a: list[str], b: list[str], limit: int
) -> None:
    diff = [FileDiff(path="f", old_text="".join(a), new_text="".join(b))]
    (full,) = plan_diffs(diff, CardLimits())
    total = sum(h.shown for h in full.hunks())
    (cut,) = plan_diffs(diff, CardLimits(max_diff_lines=limit))
    shown = sum(h.shown for h in cut.hunks())
    hidden = sum(s.rows for h in cut.hunks() for s in h.rows if isinstance(s, Skip))
    assert shown == cut.shown <= min(total, limit) and cut.total == total
    if total > limit:
        assert cut.truncated is not None and cut.truncated.startswith(
            f"diff truncated: {shown:,} of {total:,} rows shown "
            f"(limit {limit:,} rows per card)"
        )
        later = total - sum(h.total for h in cut.hunks())
        assert shown + hidden + later == total
    else:
        assert cut.truncated is None and hidden == 0


@given(line_lists, line_lists)
def test_anchored_matcher_blocks_are_real_matches(a: list[str], b: list[str]) -> None:
    blocks = AnchoredMatcher(a, b).get_matching_blocks()
    assert blocks[-1] == (len(a), len(b), 0)
    for (i, j, n), (i2, j2, _) in itertools.pairwise(blocks):
        assert a[i : i + n] == b[j : j + n]
        assert i + n <= i2 and j + n <= j2


@given(line_lists, line_lists, st.integers(0, 40), st.integers(0, 40))
def test_galloping_runs_match_a_plain_scan(
    a: list[str], b: list[str], i: int, j: int
) -> None:
    i, j = min(i, len(a)), min(j, len(b))
    limit = min(len(a) - i, len(b) - j)
    forward = 0
    while forward < limit and a[i + forward] == b[j + forward]:
        forward += 1
    assert _match._run(a, i, b, j, limit) == forward
    limit = min(i, j)
    back = 0
    while back < limit and a[i - back - 1] == b[j - back - 1]:
        back += 1
    assert _match._run_back(a, i, b, j, limit) == back


def test_scattered_edits_in_a_big_file_scan_linear_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Work proxy, not a timer: the spans difflib is asked to search. Plain
    # SequenceMatcher rescans most of the file once per edit (quadratic).
    old = lines(20_000, "value_{} = compute()")
    new = "".join(
        ("edited\n" if i % 100 == 0 else line)
        for i, line in enumerate(old.splitlines(True))
    )
    scanned = 0
    original = difflib.SequenceMatcher.find_longest_match

    def counting(
        self: Any, alo: int = 0, ahi: Any = None, blo: int = 0, bhi: Any = None
    ) -> Any:
        nonlocal scanned
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        scanned += (ahi - alo) + (bhi - blo)
        return original(self, alo, ahi, blo, bhi)

    monkeypatch.setattr(difflib.SequenceMatcher, "find_longest_match", counting)
    card = render_card(diff_model(old, new))
    assert "edited" in card.data["text/html"]
    assert scanned < 10 * 40_000


# ------------------------------------------------------------ markdown / plain


def test_console_fence_strips_trailing_newlines_and_escapes() -> None:
    md = render_card(terminal_model("\x1b[1mhi\x1b[0m\n\n", exit_code=0)).data[
        "text/markdown"
    ]
    assert "```console\nhi\n```" in md
    assert md.startswith(
        MD_OPEN + "#### \u25b6 echo hi\n\n*done \u00b7 exit 0 \u00b7 tool\\: bash*"
    )
    assert "\x1b" not in md
    empty = render_card(terminal_model("")).data["text/markdown"]
    assert "```console\n\n```" in empty


def test_fence_outgrows_backticks_in_the_output() -> None:
    md = render_card(terminal_model("a ``` b\n`````\n")).data["text/markdown"]
    assert "``````console\na ``` b\n`````\n``````" in md
    assert fence("no ticks") == "```\nno ticks\n```"
    assert fence("x `` y", "diff") == "```diff\nx `` y\n```"


def test_markdown_titles_are_literal() -> None:
    assert md_inline("[a](javascript:x) <b> *c*\nd") == (
        "\\[a\\]\\(javascript\\:x\\) \\<b\\> \\*c\\* d"
    )
    md = render_card(GenericCallView(title="# <img src=x>")).data["text/markdown"]
    assert md.startswith(MD_OPEN + "#### \u25c6 \\# \\<img src\\=x\\>\n")


def test_generic_markdown_fences_content_and_input() -> None:
    md = render_card(generic_model()).data["text/markdown"]
    assert md == MD_OPEN + "#### \u25c6 add\n\n*done*\n\n```text\n3\n```" + MD_CLOSE
    pending = render_card(GenericCallView(title="t", raw_input={"q": 1})).data[
        "text/markdown"
    ]
    assert '```json\n{\n  "q": 1\n}\n```' in pending


def test_plain_text_summaries() -> None:
    assert render_card(terminal_model("out\n", exit_code=0)).data["text/plain"] == (
        "[done] $ echo hi (exit 0) \u2014 out"
    )
    long = render_card(
        generic_model(
            result=GenericResultView(content=[{"type": "text", "text": "one\ntwo"}])
        )
    ).data["text/plain"]
    assert long == "[done] add\none\ntwo"
    diff = render_card(diff_model("a\n", "b\n")).data["text/plain"]
    assert diff == "[done] edit\n--- /p/f.txt\n+++ /p/f.txt\n@@ -1 +1 @@\n-a\n+b"


def test_control_characters_cannot_drive_a_console() -> None:
    model = generic_model(
        result=GenericResultView(
            content=[{"type": "text", "text": "\x1b]52;c;AAAA\x07\u202ex"}]
        )
    )
    card = render_card(model)
    for mime in ("text/plain", "text/markdown", "text/html"):
        assert "\x1b" not in card.data[mime] and "\u202e" not in card.data[mime]
    assert "[U+001B]]52;c;AAAA[U+0007][U+202E]x" in card.data["text/plain"]
    assert visible("a\r\nb\x00") == "a\nb[U+0000]"


# ------------------------------------------------------------ failure isolation


def test_a_raising_part_leaves_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(card: Any) -> str:
        raise RuntimeError("html broke")

    monkeypatch.setattr(render, "card_html", boom)
    card = render_card(generic_model())
    assert set(card.data) == {CARD_MIME, "text/markdown", "text/plain"}
    assert card.data["text/plain"] == "[done] add \u2014 3"
    assert card.metadata[CARD_MIME]["renderErrors"] == {
        "text/html": "RuntimeError: html broke"
    }


def test_plain_text_always_renders(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(card: Any) -> str:
        raise ValueError("nope")

    monkeypatch.setattr(render, "card_plain", boom)
    monkeypatch.setattr(render, "card_markdown", boom)
    card = render_card(generic_model())
    assert card.data["text/plain"] == "[done] add"
    assert "text/html" in card.data and "text/markdown" not in card.data
    assert set(card.metadata[CARD_MIME]["renderErrors"]) == {
        "text/markdown",
        "text/plain",
    }


def test_non_json_input_drops_only_the_json_part() -> None:
    model = CardModel(tool="t", call=GenericCallView(title="t", raw_input={"s": {1}}))
    card = render_card(model)
    assert CARD_MIME not in card.data
    assert '"s": "<set>"' in Page(card.data["text/html"]).content
    assert "TypeError" in card.metadata[CARD_MIME]["renderErrors"][CARD_MIME]
    assert isinstance(card, ToolCard)
