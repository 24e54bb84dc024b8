"""The README documents `python -m dsh_nb demo` as the no-browser tour: it must work."""

from __future__ import annotations

from processes import run_python


def test_demo_runs_headless_and_prints_every_card() -> None:
    done = run_python("-m", "dsh_nb", "demo")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[done] add — 5" in out
    assert 'Error: invalid arguments: "a" must be an integer' in out
    assert "hello from the shell" in out and "(exit 0)" in out
    assert "[denied] rm notes.txt — Error: rm is not allowed in the demo" in out
    assert "-beta\n+BETA" in out
    assert 'Error: unknown tool "serch"' in out
    assert "1 approval asked" in out
    # The model-driven turn, through the loopback replay server and the SDK.
    turn = out[out.index("A model in the loop") :]
    assert "assistant: Let me work that out." in turn
    assert '--- model called add({"a": 20, "b": 22})\n[done] add — 42' in turn
    assert "[done] $ cat notes.txt (exit 0)" in turn
    assert turn.rstrip().endswith("2 steps · 442 in · 58 out tokens")


def test_bad_usage_exits_2() -> None:
    done = run_python("-m", "dsh_nb", "nope")
    assert done.returncode == 2
    assert "usage: python -m dsh_nb demo" in done.stderr
