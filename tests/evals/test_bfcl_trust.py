"""``bfcl.load`` trusts the schemas it writes: every one of them is valid.

The loader skips jsonschema's meta-schema check (most of a load's time),
because each tool's schema is :func:`bfcl.tool_schema`'s own output. This
test is where the check happens instead: every distinct schema of every
single-turn category, checked once against the 2020-12 meta-schema. The
dry run's check then refuses what the tool's schema refuses.
"""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from dsh_nb.evals import bfcl
from dsh_nb.tools.errors import ToolArgsError
from dsh_nb.tools.schema.argcheck import argument_check

pytest.importorskip("bfcl_eval")


def test_every_schema_the_loader_writes_is_valid() -> None:
    seen: set[str] = set()
    for category in bfcl.CATEGORIES:
        for case in bfcl.load(category):
            for tool in case.tools or ():
                text = json.dumps(tool.parameters, sort_keys=True)
                if text not in seen:
                    seen.add(text)
                    Draft202012Validator.check_schema(tool.parameters)
    assert len(seen) > 1000


def test_a_loaded_tool_still_checks_its_arguments() -> None:
    (case,) = bfcl.load("simple_python", limit=1)
    (tool,) = case.tools or ()
    check = argument_check(tool)
    assert check({}) and "base" in check({})[0]
    good = bfcl.reference_calls(case)[0].arguments
    assert check(dict(good)) == []
    with pytest.raises(ToolArgsError):
        tool.execute({}, None)
