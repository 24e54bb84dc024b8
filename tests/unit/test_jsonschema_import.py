"""jsonschema is imported without its IRI grammar, which still works on demand.

Run in a fresh interpreter: what is imported is the behaviour under test.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

__all__: list[str] = []

# Looked up, not imported: importing it is the 3 s this file is about, and
# it would cost that in every worker's collection.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("rfc3987_syntax") is None,
    reason="rfc3987_syntax is not installed",
)

_PROBE = """
import json, sys
from dsh_nb.tools.schema._rawschema import compile_json_schema_validator
check = compile_json_schema_validator(
    {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
)
seen = {"errors": [str(e) for e in check({"n": "x"})],
        "grammar_at_first_tool": "rfc3987_syntax" in sys.modules,
        "jsonschema": "jsonschema" in sys.modules}
import jsonschema
formats = jsonschema.FormatChecker()
seen["iri"] = [formats.conforms(v, "iri") for v in ("https://example.org/ä", "no iri")]
seen["iri_reference"] = formats.conforms("../ä?x#y", "iri-reference")
import rfc3987_syntax
seen["grammar_after"] = getattr(rfc3987_syntax, "__file__", None) is not None
print(json.dumps(seen))
"""


def test_the_first_schema_check_skips_the_grammar_and_iri_formats_still_work() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["jsonschema"] and not seen["grammar_at_first_tool"], seen
    assert seen["errors"] and "n" in seen["errors"][0], seen
    # A user's FormatChecker: the stand-in hands over to the real grammar.
    assert seen["iri"] == [True, False], seen
    assert seen["iri_reference"] is True, seen
    assert seen["grammar_after"], seen
