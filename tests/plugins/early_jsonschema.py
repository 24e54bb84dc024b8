"""Import jsonschema the quick way before nbval's plugin imports it.

Loaded with ``-p`` (pyproject's addopts), so before the plugins found by
entry point. nbval imports nbformat, which imports jsonschema, which
imports ``rfc3987_syntax`` when it is installed (every JupyterLab
environment has it) and builds an Earley grammar: about 2.9 s in each
pytest process, the controller, both workers and the nested runs.
``load_jsonschema`` imports it with that grammar deferred to first use, as
dsh_nb's own tools do; nbformat then finds the module already imported.
"""

from __future__ import annotations

from dsh_nb.tools._jsonschema import load_jsonschema

load_jsonschema()
