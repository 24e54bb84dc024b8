"""Time ``%load_ext dsh_nb`` in fresh kernels, and a ``%call``'s overhead.

Run: ``python benchmarks/load.py [--kernels 5] [--calls 200] [--load-only]
[--no-warm-up]``.

1. Load time: in each of N fresh ipykernels (isolated Jupyter folders), the
   execute_reply round trip of the ``%load_ext`` cell minus that of an empty
   cell run just before it; also the load's wall and CPU time measured
   inside the kernel (CPU time is what a busy machine does not inflate) and
   whether ``jsonschema`` stayed unimported. Prints the median (target
   <= 150 ms). In the same run and the same way, fresh kernels time
   ``import ipywidgets`` instead, and the load's cost is set against it
   (target: the load costs no more than that import).
2. Call overhead, in one kernel with an ``add`` tool: per-call time of
   ``%call add {...}`` (the rewritten, awaited form, with its live card
   sent over iopub) against a direct ``await registry().execute(...)``,
   both timed inside the kernel, and per-cell round trips of each.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine
from jupyter_client.manager import KernelManager


def _extension() -> str:
    import dsh_nb

    if hasattr(dsh_nb, "load_ipython_extension"):
        return "dsh_nb"
    return "dsh_nb.notebook.extension"  # until dsh_nb re-exports the loader


EXTENSION = os.environ.get("DSH_EXTENSION") or _extension()
TARGET_MS = 150.0

ADD = '''%%tool
def add(a: int, b: int = 2) -> str:
    """Add two integers."""
    return str(a + b)
'''

DIRECT_SETUP = """
import dsh_nb.notebook.extension as _ext
from dsh_nb.tools.values.execution import ToolExecutionInput as _Input
_registry = _ext.registry()
_input = _Input(call_id="bench", name="add", arguments={"a": 1})
"""

IN_KERNEL = """
import time as _t, json as _j
for _ in range(20):
    await _registry.execute(_input)
    await __dsh_nb_call_magic__('add {{"a": 1}}')
_s = _t.perf_counter()
for _ in range({n}):
    await _registry.execute(_input)
_direct = (_t.perf_counter() - _s) / {n} * 1e6
_s = _t.perf_counter()
for _ in range({n}):
    await __dsh_nb_call_magic__('add {{"a": 1}}')
_magic = (_t.perf_counter() - _s) / {n} * 1e6
print(_j.dumps({{"direct": _direct, "magic": _magic}}))
"""


# An installed wheel ships compiled bytecode; a dev checkout run with
# PYTHONDONTWRITEBYTECODE=1 would recompile every module in every kernel
# (about 150 ms here). The kernels share one bytecode cache instead, filled
# by a warm-up kernel, so the numbers are those of an installed package.
PYCACHE = Path(tempfile.mkdtemp(prefix="dsh-bench-pycache-"))


class Kernel:
    """One fresh ipykernel in its own Jupyter folders."""

    def __init__(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="dsh-bench-"))
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
        for name in ("IPYTHONDIR", "JUPYTER_RUNTIME_DIR", "JUPYTER_CONFIG_DIR"):
            folder = self.tmp / name.lower()
            folder.mkdir()
            env[name] = str(folder)
        # "python3" is ipykernel's native spec: this interpreter, this venv.
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env, cwd=str(self.tmp))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str) -> tuple[float, str]:
        """Execute ``code``; return (round trip seconds, stdout)."""
        start = time.perf_counter()
        msg_id = self.kc.execute(code)
        reply = self.kc.get_shell_msg(timeout=120)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=120)
        elapsed = time.perf_counter() - start
        stdout = []
        while True:
            msg = self.kc.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content["name"] == "stdout":
                stdout.append(content["text"])
            if kind == "error":
                raise RuntimeError("\n".join(content["traceback"]))
            if kind == "status" and content["execution_state"] == "idle":
                break
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"cell failed: {reply['content']}")
        return elapsed, "".join(stdout)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


LOAD_CELL = """import time as _t
_w, _c = _t.perf_counter(), _t.process_time()
%load_ext {ext}
print((_t.perf_counter() - _w) * 1000, (_t.process_time() - _c) * 1000)
"""

IMPORT_CELL = """import time as _t
_w, _c = _t.perf_counter(), _t.process_time()
import {module}
print((_t.perf_counter() - _w) * 1000, (_t.process_time() - _c) * 1000)
"""


def import_once(module: str) -> dict[str, float]:
    """``import module`` in a fresh kernel, timed as the load is."""
    kernel = Kernel()
    try:
        kernel.run("import time")
        empty, _ = kernel.run("pass")
        imported, out = kernel.run(IMPORT_CELL.format(module=module))
        wall, cpu = (float(x) for x in out.split())
    finally:
        kernel.close()
    return {"round_trip_ms": (imported - empty) * 1000, "wall_ms": wall, "cpu_ms": cpu}


def _medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    return {
        key: statistics.median(r[key] for r in runs)
        for key in ("round_trip_ms", "wall_ms", "cpu_ms")
    }


def load_once(preload: str = "") -> dict[str, Any]:
    kernel = Kernel()
    try:
        # The first cell of a kernel pays one-off costs.
        kernel.run("import time" + (f", {preload}" if preload else ""))
        empty, _ = kernel.run("pass")
        loaded, out = kernel.run(LOAD_CELL.format(ext=EXTENSION))
        wall, cpu = (float(x) for x in out.split())
        _, out = kernel.run(
            "import sys, json; print(json.dumps(["
            "'jsonschema' in sys.modules, 'ipywidgets' in sys.modules]))"
        )
        jsonschema, ipywidgets = json.loads(out)
    finally:
        kernel.close()
    return {
        "round_trip_ms": (loaded - empty) * 1000,
        "wall_ms": wall,
        "cpu_ms": cpu,
        "jsonschema": jsonschema,
        "ipywidgets": ipywidgets,
    }


def call_overhead(calls: int, cells: int) -> dict[str, float]:
    kernel = Kernel()
    try:
        kernel.run(f"%load_ext {EXTENSION}")
        kernel.run(ADD)
        kernel.run(DIRECT_SETUP)
        _, out = kernel.run(IN_KERNEL.format(n=calls))
        inside = json.loads(out)
        direct_cells, magic_cells = [], []
        for _ in range(cells):
            direct_cells.append(kernel.run("_r = await _registry.execute(_input)")[0])
            magic_cells.append(kernel.run('%call add {"a": 1}')[0])
    finally:
        kernel.close()
        shutil.rmtree(PYCACHE, ignore_errors=True)
    return {
        "direct_us": inside["direct"],
        "magic_us": inside["magic"],
        "direct_cell_ms": statistics.median(direct_cells) * 1000,
        "magic_cell_ms": statistics.median(magic_cells) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=5, help="fresh kernels")
    parser.add_argument("--calls", type=int, default=200, help="calls per loop")
    parser.add_argument("--cells", type=int, default=30, help="cells per form")
    parser.add_argument(
        "--load-only", action="store_true", help="skip the call overhead"
    )
    parser.add_argument(
        "--no-warm-up",
        action="store_true",
        help="skip the two warm-up kernels (a smoke run: the first figures "
        "then pay for a cold bytecode cache)",
    )
    args = parser.parse_args()

    print(f"# {machine()}; extension: %load_ext {EXTENSION}")
    if not args.no_warm_up:
        load_once()  # warm-up: fills the shared bytecode cache
        import_once("ipywidgets")
    runs, widgets = [], []
    for _ in range(args.kernels):  # interleaved: both see the same machine
        runs.append(load_once())
        widgets.append(import_once("ipywidgets"))
    trips = [r["round_trip_ms"] for r in runs]
    median = statistics.median(trips)
    print(f"load round trip minus empty cell, {args.kernels} fresh kernels:")
    print("  each (ms): " + ", ".join(f"{t:.1f}" for t in trips))
    verdict = "OK" if median <= TARGET_MS else "OVER"
    print(f"  median: {median:.1f} ms (target <= {TARGET_MS:.0f} ms: {verdict})")
    wall = statistics.median(r["wall_ms"] for r in runs)
    cpu = statistics.median(r["cpu_ms"] for r in runs)
    print(f"  inside the kernel, median: wall {wall:.1f} ms, CPU {cpu:.1f} ms")
    print(f"  jsonschema imported after load: {any(r['jsonschema'] for r in runs)}")
    print(f"  ipywidgets imported after load: {any(r['ipywidgets'] for r in runs)}")
    load, bar = _medians(runs), _medians(widgets)
    print(f"%load_ext against `import ipywidgets`, {args.kernels} fresh kernels each:")
    print(
        "  import ipywidgets, each round trip (ms): "
        + ", ".join(f"{r['round_trip_ms']:.1f}" for r in widgets)
    )
    for key, label in (
        ("round_trip_ms", "round trip"),
        ("wall_ms", "wall in kernel"),
        ("cpu_ms", "CPU in kernel"),
    ):
        verdict = "OK" if load[key] <= bar[key] else "OVER"
        print(
            f"  median {label}: %load_ext {load[key]:.1f} ms, import ipywidgets "
            f"{bar[key]:.1f} ms ({verdict})"
        )
    warm = [load_once("ipywidgets") for _ in range(args.kernels)]
    print("same, with ipywidgets already imported (its share of the load):")
    print(
        f"  round trip median {statistics.median(r['round_trip_ms'] for r in warm):.1f}"
        f" ms; inside the kernel: wall "
        f"{statistics.median(r['wall_ms'] for r in warm):.1f} ms, CPU "
        f"{statistics.median(r['cpu_ms'] for r in warm):.1f} ms"
    )

    if args.load_only:
        shutil.rmtree(PYCACHE, ignore_errors=True)
        return
    cost = call_overhead(args.calls, args.cells)
    extra = cost["magic_us"] - cost["direct_us"]
    print(f"call overhead, add(a, b), {args.calls} calls in one kernel:")
    print(f"  await registry().execute(...): {cost['direct_us']:.1f} µs/call")
    print(f"  %call add {{...}} (live card):  {cost['magic_us']:.1f} µs/call")
    print(f"  overhead of %call: {extra:.1f} µs/call")
    cell_extra = cost["magic_cell_ms"] - cost["direct_cell_ms"]
    print(
        f"  per-cell round trip, median of {args.cells}: direct "
        f"{cost['direct_cell_ms']:.2f} ms, %call {cost['magic_cell_ms']:.2f} ms "
        f"(+{cell_extra:.2f} ms)"
    )


if __name__ == "__main__":
    main()
