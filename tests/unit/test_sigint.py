"""The one SIGINT helper: installs, chains, consumes, and puts back.

Real signals throughout: ``signal.raise_signal`` delivers SIGINT to this
process, and Python runs the handler in the main thread (where pytest
runs) before the next line.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest

from dsh_nb.tools.running.sigint import PassOn, SigintHandler


class Kernel:
    """Stands in for the kernel's own handler: records each interrupt."""

    def __init__(self) -> None:
        self.interrupts = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.interrupts += 1


@pytest.fixture
def kernel() -> Iterator[Kernel]:
    before = signal.getsignal(signal.SIGINT)
    kernel = Kernel()
    signal.signal(signal.SIGINT, kernel)
    yield kernel
    signal.signal(signal.SIGINT, before)


def interrupt() -> None:
    signal.raise_signal(signal.SIGINT)


def consuming(seen: list[str], name: str) -> SigintHandler:
    return SigintHandler(lambda pass_on: seen.append(name))


def test_inside_a_block_the_handler_takes_the_interrupt(kernel: Kernel) -> None:
    seen: list[str] = []
    handler = consuming(seen, "chat")
    with handler:
        assert handler.installed
        interrupt()
        interrupt()
    assert seen == ["chat", "chat"]
    assert kernel.interrupts == 0
    assert signal.getsignal(signal.SIGINT) is kernel
    interrupt()
    assert kernel.interrupts == 1


def test_pass_on_chains_to_the_replaced_handler(kernel: Kernel) -> None:
    seen: list[str] = []

    def chained(pass_on: PassOn) -> None:
        seen.append("call")
        pass_on()

    with SigintHandler(chained):
        interrupt()
    assert (seen, kernel.interrupts) == (["call"], 1)


def test_the_newest_block_is_asked_first(kernel: Kernel) -> None:
    seen: list[str] = []

    def call(pass_on: PassOn) -> None:
        seen.append("call")
        pass_on()

    with consuming(seen, "chat"), SigintHandler(call):
        interrupt()
    assert seen == ["call", "chat"]
    assert kernel.interrupts == 0


def test_step_aside_lets_the_next_interrupt_through(kernel: Kernel) -> None:
    seen: list[str] = []
    handler: SigintHandler

    def once(pass_on: PassOn) -> None:
        handler.step_aside()
        seen.append("approval")

    handler = SigintHandler(once)
    with handler:
        interrupt()
        interrupt()
        assert not handler.installed
    assert (seen, kernel.interrupts) == (["approval"], 1)
    assert signal.getsignal(signal.SIGINT) is kernel


def test_nested_blocks_keep_one_handler_until_the_last_ends(kernel: Kernel) -> None:
    seen: list[str] = []
    handler = consuming(seen, "call")
    handler.__enter__()  # two calls running at once
    handler.__enter__()
    assert handler.depth == 2
    handler.__exit__(None, None, None)
    interrupt()
    assert handler.installed and seen == ["call"]
    handler.__exit__(None, None, None)
    assert handler.depth == 0
    assert signal.getsignal(signal.SIGINT) is kernel


def test_blocks_of_two_handlers_ending_out_of_order(kernel: Kernel) -> None:
    seen: list[str] = []
    chat, approval = consuming(seen, "chat"), consuming(seen, "approval")
    chat.__enter__()
    approval.__enter__()
    chat.__exit__(None, None, None)  # not in place: the approval's stays
    assert approval.installed
    approval.__exit__(None, None, None)  # puts back the chat's, now stale
    assert chat.installed
    interrupt()  # the stale one steps aside and passes the signal on
    assert seen == []
    assert kernel.interrupts == 1
    assert signal.getsignal(signal.SIGINT) is kernel


def test_a_handler_put_back_after_its_block_steps_aside(kernel: Kernel) -> None:
    seen: list[str] = []
    handler = consuming(seen, "chat")
    with handler:
        installed = signal.getsignal(signal.SIGINT)
    # ipykernel restores the handler it saved around a request.
    signal.signal(signal.SIGINT, installed)
    interrupt()
    assert (seen, kernel.interrupts) == ([], 1)
    assert signal.getsignal(signal.SIGINT) is kernel


def test_a_block_reinstalls_a_handler_someone_replaced(kernel: Kernel) -> None:
    seen: list[str] = []
    handler = consuming(seen, "call")
    with handler:
        signal.signal(signal.SIGINT, kernel)  # the kernel swapped handlers
        with handler:
            assert handler.installed
            interrupt()
    assert (seen, kernel.interrupts) == (["call"], 0)
    assert signal.getsignal(signal.SIGINT) is kernel


@pytest.mark.parametrize("replaced", [signal.SIG_DFL, signal.default_int_handler])
def test_passing_on_to_the_default_raises_keyboard_interrupt(replaced: Any) -> None:
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, replaced)
    try:
        with SigintHandler(lambda pass_on: pass_on()), pytest.raises(KeyboardInterrupt):
            interrupt()
    finally:
        signal.signal(signal.SIGINT, before)


def test_passing_on_to_ignore_does_nothing() -> None:
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    passed: list[int] = []
    try:
        with SigintHandler(lambda pass_on: (pass_on(), passed.append(1))):
            interrupt()
        assert passed == [1]
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_off_the_main_thread_a_block_installs_nothing(kernel: Kernel) -> None:
    handler = consuming([], "call")
    states: list[bool] = []

    def enter_and_leave() -> None:
        with handler:
            states.append(handler.installed)

    worker = threading.Thread(target=enter_and_leave)
    worker.start()
    worker.join()
    assert states == [False]
    assert signal.getsignal(signal.SIGINT) is kernel
