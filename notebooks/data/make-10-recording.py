"""Make notebook 10's recording with a simulated model (no endpoint needed).

``python notebooks/data/make-10-recording.py`` runs the notebook's own
tool and case definitions (its cells tagged ``define``) through
``run_eval(..., record="data/10-flights.jsonl")`` against a loopback
``ReplayServer`` and the official openai SDK. The server's model is
simulated: it reads the request as a model would (the tools' schemas and
the user's prompt) and makes the mistakes real models make with a vague
description (city names for airport codes, dates as written, a count as a
word, a forgotten argument) far more often than with a precise one. Its
choices are random per trial, from a fixed seed, so the file is
reproducible. A real run replaces this file: see the notebook's last cell.
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import random
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
import openai

from dsh_nb.evals import run_eval
from dsh_nb.models.replay_server import ReplayServer
from dsh_nb.models.scripted import ToolCallSpec, Turn

HERE = Path(__file__).resolve().parent
NOTEBOOK = HERE.parent / "10-is-my-tool-good-enough.ipynb"
OUT = HERE / "10-flights.jsonl"
SEED = "dsh-notebook-10"

CITY = {
    "CDG": "Paris",
    "NRT": "Tokyo",
    "LIS": "Lisbon",
    "BER": "Berlin",
    "JFK": "New York",
    "LHR": "London",
    "MAD": "Madrid",
    "FCO": "Rome",
    "OSL": "Oslo",
    "HEL": "Helsinki",
    "AMS": "Amsterdam",
    "VIE": "Vienna",
    "SFO": "San Francisco",
    "SEA": "Seattle",
    "DUB": "Dublin",
    "EDI": "Edinburgh",
    "ATH": "Athens",
    "IST": "Istanbul",
    "CPH": "Copenhagen",
    "ARN": "Stockholm",
    "ZRH": "Zurich",
    "PRG": "Prague",
    "WAW": "Warsaw",
    "BUD": "Budapest",
    "DXB": "Dubai",
    "BOM": "Mumbai",
    "SIN": "Singapore",
    "BKK": "Bangkok",
    "SYD": "Sydney",
    "AKL": "Auckland",
    "YYZ": "Toronto",
    "YVR": "Vancouver",
    "MEX": "Mexico City",
    "BOG": "Bogota",
    "LIM": "Lima",
    "SCL": "Santiago",
    "CAI": "Cairo",
    "NBO": "Nairobi",
    "JNB": "Johannesburg",
    "CPT": "Cape Town",
}
WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}
#: Chance of each mistake: (vague, precise).
RATES = {
    "city": (0.55, 0.04),
    "date": (0.5, 0.04),
    "word": (0.35, 0.05),
    "forget": (0.2, 0.03),
    "no_call": (0.03, 0.02),
    "fix": (0.85, 0.9),
}


def definitions() -> dict[str, Any]:
    """The notebook's tools and cases, from its ``define`` cells."""
    namespace: dict[str, Any] = {}
    exec(
        "from typing import Annotated\n"
        "from dsh_nb.evals import Case, EvalReport, call, maybe, run_eval\n"
        "from dsh_nb.tools import ToolRegistry, tool\n",
        namespace,
    )
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if "define" in cell.metadata.get("tags", ()):
            exec(cell.source, namespace)
    return namespace


class SimulatedModel:
    """A ReplayServer responder answering like a model that reads the schema."""

    def __init__(self, flights: list[tuple[Any, ...]]) -> None:
        self.rows = {row[0]: row for row in flights}
        self.trials: dict[tuple[str, bool], int] = {}

    def __call__(self, request: Any) -> Turn:
        body = request.body
        messages = body["messages"]
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        precise = "IATA" in json.dumps(body["tools"])
        tokens = len(json.dumps(body)) // 4
        assistants = [m for m in messages if m["role"] == "assistant"]
        if assistants:
            return self.follow_up(assistants[-1], messages[-1], precise, tokens)
        key = (prompt, precise)
        trial = self.trials.get(key, 0)
        self.trials[key] = trial + 1
        seed = hashlib.sha256(f"{SEED}|{prompt}|{precise}|{trial}".encode()).digest()
        rng = random.Random(seed)
        return self.first(self.rows[prompt], prompt, precise, rng, tokens)

    def first(
        self, row: tuple[Any, ...], prompt: str, precise: bool, rng: Any, tokens: int
    ) -> Turn:
        _, origin, destination, date, passengers = row
        chance = {k: v[1] if precise else v[0] for k, v in RATES.items()}
        delay = rng.uniform(0.2, 0.6)
        if rng.random() < chance["no_call"]:
            return Turn(
                text="Which airports do you mean?",
                input_tokens=tokens,
                output_tokens=8,
                delay=delay,
            )
        args: dict[str, Any] = {"origin": origin, "destination": destination}
        codes_in_prompt = origin in prompt and destination in prompt
        if not codes_in_prompt and rng.random() < chance["city"]:
            args = {"origin": CITY[origin], "destination": CITY[destination]}
        iso_in_prompt = date in prompt
        day = datetime.date.fromisoformat(date)
        written = f"{day:%B} {day.day}, {day.year}"
        args["date"] = (
            written if not iso_in_prompt and rng.random() < chance["date"] else date
        )
        state = "ok"
        if passengers > 1:
            if rng.random() < chance["forget"]:
                pass
            elif rng.random() < chance["word"]:
                args["passengers"] = WORDS[passengers]
                state = "fix" if rng.random() < chance["fix"] else "stuck"
            else:
                args["passengers"] = passengers
        call_id = f"call_{state}_{rng.randrange(10**8):08d}"
        spec = ToolCallSpec(
            name="search_flights", arguments=json.dumps(args), call_id=call_id
        )
        return Turn(
            tool_calls=(spec,), input_tokens=tokens, output_tokens=30, delay=delay
        )

    def follow_up(
        self, last: dict[str, Any], result: dict[str, Any], precise: bool, tokens: int
    ) -> Turn:
        calls = last.get("tool_calls") or []
        refused = "INVALID_ARGS" in json.dumps(result) or "must be" in str(
            result.get("content")
        )
        if calls and refused:
            call = calls[0]
            state = call["id"].split("_")[1]
            if state == "fix":
                args = json.loads(call["function"]["arguments"])
                word = args.get("passengers")
                number = {v: k for k, v in WORDS.items()}.get(word, 1)
                args["passengers"] = number
                spec = ToolCallSpec(
                    name="search_flights",
                    arguments=json.dumps(args),
                    call_id=re.sub("_fix_", "_fixed_", call["id"]),
                )
                return Turn(
                    tool_calls=(spec,), input_tokens=tokens, output_tokens=30, delay=0.3
                )
            return Turn(
                text="I could not search: the tool refused the request.",
                input_tokens=tokens,
                output_tokens=12,
                delay=0.2,
            )
        return Turn(
            text="I found 3 flights.", input_tokens=tokens, output_tokens=6, delay=0.2
        )


async def main() -> None:
    ns = definitions()
    with ReplayServer(SimulatedModel(ns["FLIGHTS"])) as server:
        client = openai.AsyncOpenAI(
            base_url=server.openai_url, api_key=server.token, max_retries=0
        )
        report = await run_eval(
            ns["cases"],
            model="simulated-model",
            client=client,
            variants={"vague": ns["vague"], "precise": ns["precise"]},
            trials=3,
            record=str(OUT),
        )
    print(report)
    print(report.compare())


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
