"""Expectations and grading: multisets, order, argument matching, predicates."""

from __future__ import annotations

import dataclasses

import pytest

from dsh_nb.evals import (
    ANY,
    ActualCall,
    Case,
    Grade,
    call,
    calls,
    expected_names,
    grade,
    maybe,
    no_call,
    one_of,
)
from dsh_nb.tools import define_tool


def A(name: str, **arguments: object) -> ActualCall:
    return ActualCall(name, arguments)


# --- argument matchers -----------------------------------------------------


def test_literal_needs_presence_and_json_equality() -> None:
    e = call("f", x=1)
    assert e.matches(A("f", x=1))
    assert e.matches(A("f", x=1.0))  # JSON has one number type
    assert not e.matches(A("f", x=2))
    assert not e.matches(A("f"))
    assert not e.matches(A("g", x=1))


def test_bool_is_not_int() -> None:
    assert not call("f", x=1).matches(A("f", x=True))
    assert not call("f", x=True).matches(A("f", x=1))
    assert not call("f", x=0).matches(A("f", x=False))
    assert call("f", x=True).matches(A("f", x=True))
    assert not one_of(1, 2).matches(True, True)


def test_strings_and_numbers_do_not_mix() -> None:
    assert not call("f", x="1").matches(A("f", x=1))
    assert not call("f", x=1).matches(A("f", x="1"))


def test_nested_literals_compare_deeply_and_may_hold_matchers() -> None:
    e = call("f", p={"x": 1, "tags": ["a", "b"]})
    assert e.matches(A("f", p={"x": 1.0, "tags": ["a", "b"]}))
    assert not e.matches(A("f", p={"x": 1, "tags": ["b", "a"]}))
    assert not e.matches(A("f", p={"x": 1, "tags": ["a", "b"], "extra": 0}))
    assert not e.matches(A("f", p={"x": 1}))
    open_ = call("f", p={"x": ANY, "y": maybe(2)})
    assert open_.matches(A("f", p={"x": "anything"}))
    assert open_.matches(A("f", p={"x": None, "y": 2}))
    assert not open_.matches(A("f", p={"y": 2}))
    assert not open_.matches(A("f", p={"x": 1, "y": 3}))
    assert call("f", xs=(1, 2)).matches(A("f", xs=[1, 2]))


def test_any_one_of_maybe() -> None:
    assert ANY.matches(True, None) and not ANY.matches(False, None)
    m = one_of("a", "b")
    assert (
        m.matches(True, "b") and not m.matches(True, "c") and not m.matches(False, None)
    )
    opt = maybe("a")
    assert opt.matches(False, None) and opt.matches(True, "a")
    assert not opt.matches(True, "z")
    free = maybe()
    assert free.matches(False, None) and free.matches(True, {"any": "thing"})
    with pytest.raises(ValueError, match="one_of"):
        one_of()
    assert one_of(ANY).matches(True, 3)  # matchers nest
    assert m.describe() == "one_of('a', 'b')"


def test_predicates_and_predicates_that_raise() -> None:
    e = call("f", n=lambda v: v > 3)
    assert e.matches(A("f", n=4))
    assert not e.matches(A("f", n=2))
    assert not e.matches(A("f", n="four"))  # TypeError inside: no match
    assert not e.matches(A("f"))  # absent: the predicate is not asked

    def boom(value: object) -> bool:
        raise RuntimeError("broken predicate")

    assert not call("f", n=boom).matches(A("f", n=1))
    assert grade(call("f", n=boom), [A("f", n=1)]) == Grade(True, False)


def test_unnamed_arguments_are_free_unless_extra_args_is_false() -> None:
    assert call("f", x=1).matches(A("f", x=1, y=2))
    strict = dataclasses.replace(call("f", x=1), extra_args=False)
    assert strict.extra_args is False
    assert strict.matches(A("f", x=1))
    assert not strict.matches(A("f", x=1, y=2))
    tolerant = dataclasses.replace(call("f", x=1, y=maybe()), extra_args=False)
    assert tolerant.matches(A("f", x=1, y=2))


def test_non_mapping_arguments_never_match() -> None:
    assert not call("f").matches(ActualCall("f", ["not", "a", "dict"]))  # type: ignore[arg-type]


# --- grading ---------------------------------------------------------------


def test_single_call() -> None:
    e = call("weather", city="Paris")
    assert grade(e, [A("weather", city="Paris")]) == Grade(True, True)
    assert grade(e, [A("weather", city="Rome")]) == Grade(True, False)
    assert grade(e, [A("time", city="Paris")]) == Grade(False, False)
    assert grade(e, []) == Grade(False, False)
    extra = grade(e, [A("weather", city="Paris"), A("weather", city="Paris")])
    assert extra == Grade(False, False)
    assert grade(e, [A("weather", city="Paris")]).passed


def test_multiset_of_names() -> None:
    e = calls(call("a"), call("b"), call("a"))
    assert grade(e, [A("b"), A("a"), A("a")]).selected
    assert not grade(e, [A("a"), A("b")]).selected
    assert not grade(e, [A("a"), A("b"), A("b")]).selected
    assert not grade(e, [A("a"), A("b"), A("a"), A("a")]).selected


def test_ordered() -> None:
    e = calls(call("a", x=1), call("b"), ordered=True)
    assert grade(e, [A("a", x=1), A("b")]) == Grade(True, True)
    assert grade(e, [A("b"), A("a", x=1)]) == Grade(False, False)
    assert grade(e, [A("a", x=2), A("b")]) == Grade(True, False)
    same = calls(call("a", x=1), call("a", x=2), ordered=True)
    assert grade(same, [A("a", x=2), A("a", x=1)]) == Grade(True, False)
    assert grade(same, [A("a", x=1), A("a", x=2)]) == Grade(True, True)


def test_parallel_arguments_are_matched_one_to_one_in_any_order() -> None:
    e = calls(call("w", city="Paris"), call("w", city="Rome"))
    assert grade(e, [A("w", city="Rome"), A("w", city="Paris")]) == Grade(True, True)
    # one actual call cannot serve two expectations
    assert grade(e, [A("w", city="Paris"), A("w", city="Paris")]) == Grade(True, False)


def test_bipartite_matching_beats_greedy() -> None:
    # The first expectation accepts both calls; a greedy pairing that gives it
    # the first call leaves the second expectation without its only fit.
    e = calls(call("f", x=ANY), call("f", x=1))
    assert grade(e, [A("f", x=1), A("f", x=2)]) == Grade(True, True)
    assert grade(e, [A("f", x=2), A("f", x=1)]) == Grade(True, True)
    assert grade(e, [A("f", x=2), A("f", x=3)]) == Grade(True, False)
    three = calls(call("f", x=one_of(1, 2)), call("f", x=one_of(2, 3)), call("f", x=1))
    assert grade(three, [A("f", x=2), A("f", x=1), A("f", x=3)]).args_correct
    assert not grade(three, [A("f", x=1), A("f", x=3), A("f", x=3)]).args_correct


def test_no_call() -> None:
    assert grade(no_call(), []) == Grade(True, True)
    assert grade(no_call(), [A("f")]) == Grade(False, False)


def test_expected_names() -> None:
    assert expected_names(call("a")) == ("a",)
    assert expected_names(calls(call("b"), call("a"))) == ("b", "a")
    assert expected_names(no_call()) == ()
    with pytest.raises(TypeError):
        expected_names("call a")  # type: ignore[arg-type]


def test_bad_expectations_raise_clearly() -> None:
    with pytest.raises(ValueError, match="no_call"):
        calls()
    with pytest.raises(TypeError, match="call"):
        calls("a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name"):
        call("")
    with pytest.raises(TypeError):
        grade("a", [])  # type: ignore[arg-type]


# --- Case ------------------------------------------------------------------


def test_case_from_a_string() -> None:
    c = Case("What is 2+2?", expect=call("add", a=2, b=2), id="c1", system="Be brief")
    assert c.messages() == ("Be brief", [], "What is 2+2?")
    assert c.tools is None and c.tags == () and dict(c.meta) == {}
    assert dict(c.display_names) == {}


def test_case_from_messages() -> None:
    prompt = [
        {"role": "system", "content": "You are a bot."},
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
        {"role": "user", "content": [{"type": "text", "text": "add 1 and 2"}]},
    ]
    c = Case(prompt, expect=call("add"), system="First.", tags=["math"])
    system, prior, user = c.messages()
    assert system == "First.\n\nYou are a bot."
    assert prior == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi"},
    ]
    assert user == "add 1 and 2"
    assert isinstance(c.prompt, tuple) and c.tags == ("math",)
    prompt[1]["content"] = "changed"  # the case keeps its own copy
    prior[0]["content"] = "changed too"
    assert c.messages()[1][0]["content"] == "hello"


def test_case_tools_are_stored_as_a_tuple() -> None:
    t = define_tool(
        name="add", description="", parameters={"type": "object"}, execute=lambda a: ""
    )
    c = Case("x", expect=no_call(), tools=[t], display_names={"add": "math.add"})
    assert c.tools == (t,)
    assert c.display_names["add"] == "math.add"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"prompt": [], "expect": no_call()}, ValueError),
        (
            {"prompt": [{"role": "assistant", "content": "x"}], "expect": no_call()},
            ValueError,
        ),
        ({"prompt": [{"content": "x"}], "expect": no_call()}, ValueError),
        ({"prompt": 3, "expect": no_call()}, TypeError),
        ({"prompt": "x", "expect": "add"}, TypeError),
        ({"prompt": "x", "expect": no_call(), "tools": ["add"]}, TypeError),
        ({"prompt": "x", "expect": no_call(), "tags": "math"}, TypeError),
        ({"prompt": "x", "expect": no_call(), "id": 3}, TypeError),
        (
            {"prompt": [{"role": "user", "content": {"x": 1}}], "expect": no_call()},
            ValueError,
        ),
    ],
)
def test_bad_cases_raise_naming_the_problem(
    kwargs: dict[str, object], error: type
) -> None:
    with pytest.raises(error, match=r"Case|prompt"):
        Case(**kwargs)  # type: ignore[arg-type]


def test_case_is_frozen_and_replaceable() -> None:
    c = Case("x", expect=no_call(), id="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.id = "b"  # type: ignore[misc]
    assert dataclasses.replace(c, id="b").id == "b"
