"""A worker thread asked to stop raises KeyboardInterrupt at once."""

from __future__ import annotations

import threading
import time

import pytest

from dsh_nb.tools.running.threadstop import ask_to_stop, current_ident, withdraw_stop


def test_a_python_loop_in_a_thread_stops() -> None:
    started, ended = threading.Event(), []
    ident: list[int] = []

    def spin() -> None:
        ident.append(current_ident())
        started.set()
        try:
            while True:
                pass
        except KeyboardInterrupt:
            ended.append("stopped")

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    assert started.wait(5)
    assert ask_to_stop(ident[0]) is True
    thread.join(5)
    assert not thread.is_alive() and ended == ["stopped"]


def test_except_exception_does_not_swallow_it() -> None:
    started = threading.Event()
    ident: list[int] = []
    seen: list[str] = []

    def stubborn() -> None:
        ident.append(current_ident())
        started.set()
        try:
            while True:
                try:
                    time.sleep(0.001)
                except Exception:  # noqa: BLE001 - what a careless body does
                    seen.append("swallowed")
        except KeyboardInterrupt:
            seen.append("stopped")

    thread = threading.Thread(target=stubborn, daemon=True)
    thread.start()
    assert started.wait(5)
    ask_to_stop(ident[0])
    thread.join(5)
    assert seen == ["stopped"]


def test_an_ended_thread_is_not_found() -> None:
    ident: list[int] = []
    thread = threading.Thread(target=lambda: ident.append(current_ident()))
    thread.start()
    thread.join()
    assert ask_to_stop(ident[0]) is False


def test_the_calling_thread_is_refused() -> None:
    with pytest.raises(RuntimeError, match="calling thread"):
        ask_to_stop(current_ident())


def test_a_withdrawn_stop_is_never_raised() -> None:
    started, release = threading.Event(), threading.Event()
    ident: list[int] = []
    seen: list[str] = []

    def wait_in_c() -> None:
        ident.append(current_ident())
        started.set()
        try:
            release.wait(5)  # blocked in C: a stop waits for the return
            for _ in range(1000):  # bytecode boundaries where it would fire
                pass
            seen.append("ran on")
        except KeyboardInterrupt:
            seen.append("stopped")

    thread = threading.Thread(target=wait_in_c, daemon=True)
    thread.start()
    assert started.wait(5)
    assert ask_to_stop(ident[0]) is True
    withdraw_stop(ident[0])
    release.set()
    thread.join(5)
    assert seen == ["ran on"]
