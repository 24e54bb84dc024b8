"""Forty-odd data-science tools as people write them, with calls good and bad.

Each tool's body uses its arguments as the annotated types (``path.suffix``,
``since.year``, ``agg.value``, ``point.x``), so a conversion that hands it a
string or a dict fails the good call. Each bad call lists the violations the
model must read, in the house style, in declared order. ``format_only``
marks a bad call whose only fault is a string format (JSON Schema calls
formats annotations, so a schema validator passes it; the tool does not).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

__all__ = ["CORPUS", "Sample"]


@dataclasses.dataclass(frozen=True)
class Sample:
    func: Callable[..., Any]
    good: Sequence[tuple[dict[str, Any], Any]]
    bad: Sequence[tuple[Any, Sequence[str]]]
    format_only: bool = False


class Agg(enum.Enum):
    MEAN = "mean"
    MEDIAN = "median"
    SUM = "sum"


class Level(enum.IntEnum):
    DEBUG = 10
    INFO = 20
    WARNING = 30


class Norm(str, enum.Enum):
    L1 = "l1"
    L2 = "l2"


@dataclasses.dataclass
class Point:
    x: float
    y: float


@dataclasses.dataclass
class BBox:
    """A bounding box.

    Attributes:
        top_left: upper left corner
    """

    top_left: Point
    bottom_right: Point


class SplitSpec(TypedDict):
    train: float
    test: float
    seed: NotRequired[int]


class DbConfig(BaseModel):
    host: str
    port: int = Field(5432, ge=1, le=65535)
    database: str


class Filter(BaseModel):
    column: str
    op: Literal["==", "!=", "<", ">", "<=", ">="]
    value: float | str


# -- 1-10: files, frames, dates ---------------------------------------------------


def load_csv(path: Path, nrows: int | None = None, sep: str = ",") -> str:
    """Load a CSV file."""
    return f"{path.suffix} {nrows} {sep}"


def read_parquet(path: Path, columns: list[str] | None = None) -> str:
    """Read selected columns of a Parquet file."""
    return f"{path.name} {columns}"


def filter_dates(since: dt.datetime, until: dt.datetime | None = None) -> str:
    """Keep rows between two moments."""
    return f"{since.year} {until.year if until else None}"


def daily_report(day: dt.date, tz: str = "UTC") -> str:
    """Summarise one day."""
    return f"{day.isoformat()} {day.weekday()} {tz}"


def business_hours(opens: dt.time, closes: dt.time) -> str:
    """Set business hours."""
    return f"{opens.hour}-{closes.hour}"


def rolling_mean(
    column: str, window: dt.timedelta = dt.timedelta(days=7), center: bool = False
) -> str:
    """Rolling mean over a time window."""
    return f"{column} {window.days} {center}"


def resample(
    path: Path,
    since: dt.datetime,
    agg: Agg = Agg.MEAN,
    window: Annotated[int, Field(ge=1, le=365, description="Days")] = 7,
    column: str | None = None,
) -> str:
    """Resample a time series into fixed windows."""
    return f"{path.stem} {since.month} {agg.value} {window} {column}"


def head(path: Path, n: Annotated[int, Field(ge=1, le=1000)] = 5) -> str:
    """Show the first rows."""
    return f"{path.name} {n}"


def describe_columns(columns: set[str]) -> str:
    """Describe some columns."""
    return ",".join(sorted(columns))


def sample_rows(
    path: Path, frac: Annotated[float, Field(gt=0, le=1)], seed: int | None = None
) -> str:
    """Sample a fraction of the rows."""
    return f"{path.name} {frac} {seed}"


# -- 11-20: statistics and models ------------------------------------------------


def kmeans(
    k: Annotated[int, Field(ge=1, description="clusters")], max_iter: int = 300
) -> str:
    """Cluster with k-means."""
    return f"{k} {max_iter}"


def set_weights(weights: dict[str, float]) -> str:
    """Set feature weights."""
    return f"{sum(weights.values()):.1f}"


def histogram(column: str, bins: int | Literal["auto", "fd"] = "auto") -> str:
    """Plot a histogram."""
    return f"{column} {bins}"


def quantiles(column: str, q: list[Annotated[float, Field(ge=0, le=1)]]) -> str:
    """Compute quantiles."""
    return f"{column} {len(q)}"


def correlate(
    columns: tuple[str, str], method: Literal["pearson", "spearman"] = "pearson"
) -> str:
    """Correlate two columns."""
    return f"{columns[0]}~{columns[1]} {method}"


def train_test_split(split: SplitSpec, stratify: str | None = None) -> str:
    """Split the data."""
    return f"{split['train'] + split['test']:.1f} {split.get('seed')} {stratify}"


def fit_linear(
    target: str, features: list[str], alpha: float = 1.0, norm: Norm = Norm.L2
) -> str:
    """Fit a regularised linear model."""
    return f"{target}~{'+'.join(features)} {alpha} {norm.value}"


def log_level(level: Level) -> str:
    """Set the log level."""
    return f"{level.name} {int(level)}"


def confusion_matrix(labels: list[int], normalize: bool = False) -> str:
    """Show the confusion matrix."""
    return f"{sum(labels)} {normalize}"


def top_k(column: str, k: Literal[1, 3, 5, 10] = 5) -> str:
    """The k most frequent values."""
    return f"{column} {k}"


# -- 21-30: structures ------------------------------------------------------------


def crop(box: BBox) -> str:
    """Crop an image to a box."""
    return f"{box.bottom_right.x - box.top_left.x}"


def plot_points(points: list[Point], title: str = "") -> str:
    """Scatter some points."""
    return f"{len(points)} {sum(p.x for p in points)} {title}"


def connect(config: DbConfig) -> str:
    """Connect to a database."""
    return f"{config.host}:{config.port}/{config.database}"


def query(filters: list[Filter], limit: int = 100) -> str:
    """Query with filters."""
    return " and ".join(f"{f.column}{f.op}{f.value}" for f in filters) + f" {limit}"


def rename_columns(mapping: dict[str, str]) -> str:
    """Rename columns."""
    return ",".join(f"{k}->{v}" for k, v in mapping.items())


def fill_missing(values: dict[str, int | float | str]) -> str:
    """Fill missing values per column."""
    return ",".join(type(v).__name__ for v in values.values())


def pivot(
    index: str, columns: str, values: str, aggfunc: Agg = Agg.SUM, fill: float = 0.0
) -> str:
    """Pivot a table."""
    return f"{index}/{columns}/{values} {aggfunc.value} {fill}"


def merge(
    left: Path, right: Path, on: list[str], how: Literal["inner", "left"] = "inner"
) -> str:
    """Merge two tables."""
    return f"{left.stem}+{right.stem} on {on} {how}"


def tag_runs(run_ids: list[UUID]) -> str:
    """Tag experiment runs."""
    return ",".join(str(r.version) for r in run_ids)


def price(amount: Decimal, currency: Literal["EUR", "USD"] = "EUR") -> str:
    """Format a price."""
    return f"{amount.quantize(Decimal('0.01'))} {currency}"


# -- 31-42: keyword-only, *args, **kwargs, Any, defaults -----------------------


def export(path: Path, *, overwrite: bool = False, fmt: str = "csv") -> str:
    """Export the current frame."""
    return f"{path.with_suffix('.' + fmt).name} {overwrite}"


def concat(*paths: Path) -> str:
    """Concatenate files."""
    return "+".join(p.name for p in paths)


def set_options(name: str, **options: float) -> str:
    """Set numeric options."""
    return f"{name} " + ",".join(f"{k}={v}" for k, v in sorted(options.items()))


def store(key: str, value: Any) -> str:
    """Store any JSON value."""
    return f"{key}={value!r}"


def schedule(at: dt.datetime, every: dt.timedelta | None = None) -> str:
    """Schedule a job."""
    return f"{at.hour} {every.total_seconds() if every else None}"


def anomaly_threshold(
    column: str, z: Annotated[float, Field(gt=0, description="z-score cutoff")] = 3.0
) -> str:
    """Flag values beyond a z-score."""
    return f"{column} {z}"


def save_figure(
    name: Annotated[str, Field(pattern=r"^[a-z0-9_]+$", max_length=20)],
    dpi: Annotated[int, Field(ge=50, le=600)] = 150,
) -> str:
    """Save the current figure."""
    return f"{name}.png {dpi}"


def bin_ages(edges: Annotated[list[int], Field(min_length=2)]) -> str:
    """Bin ages into ranges."""
    return f"{len(edges) - 1} bins"


def select_rows(ids: list[int] | None = None, query_text: str | None = None) -> str:
    """Select rows by ids or a query."""
    return f"{ids} {query_text}"


def resize(size: tuple[int, int], keep_aspect: bool = True) -> str:
    """Resize images."""
    return f"{size[0] * size[1]} {keep_aspect}"


def label_encode(column: str, classes: list[str] = []) -> str:  # noqa: B006
    """Encode labels as integers."""
    return f"{column} {len(classes)}"


def notify(channel: Literal["email", "slack"], message: str, urgent: bool = False):  # type: ignore[no-untyped-def]
    """Send a notification."""
    return f"{channel}:{message}:{urgent}"


CORPUS: tuple[Sample, ...] = (
    Sample(
        load_csv,
        [
            ({"path": "data/a.csv"}, ".csv None ,"),
            ({"path": "b.tsv", "nrows": 10.0, "sep": "\t"}, ".tsv 10 \t"),
        ],
        [
            (
                {"path": 3, "nrows": "50"},
                ['"path" must be a string', '"nrows" must be an integer'],
            )
        ],
    ),
    Sample(
        read_parquet,
        [({"path": "x.parquet", "columns": ["a", "b"]}, "x.parquet ['a', 'b']")],
        [
            (
                {"columns": "a"},
                ['missing required property "path"', '"columns" must be an array'],
            )
        ],
    ),
    Sample(
        filter_dates,
        [({"since": "2024-03-01T00:00:00Z", "until": None}, "2024 None")],
        [({"since": "yesterday"}, ['"since" must be an ISO 8601 datetime'])],
        format_only=True,
    ),
    Sample(
        daily_report,
        [({"day": "2024-01-01"}, "2024-01-01 0 UTC")],
        [({"day": 20240101}, ['"day" must be an ISO 8601 date'])],
    ),
    Sample(
        business_hours,
        [({"opens": "09:00:00", "closes": "17:30"}, "9-17")],
        [
            (
                {"opens": "9am", "closes": "5pm"},
                [
                    '"opens" must be an ISO 8601 time',
                    '"closes" must be an ISO 8601 time',
                ],
            )
        ],
        format_only=True,
    ),
    Sample(
        rolling_mean,
        [
            ({"column": "sales", "window": "P3D"}, "sales 3 False"),
            ({"column": "sales"}, "sales 7 False"),
        ],
        [
            (
                {"column": "sales", "window": "three days", "center": "yes"},
                ['"window" must be an ISO 8601 duration', '"center" must be a boolean'],
            )
        ],
    ),
    Sample(
        resample,
        [
            (
                {
                    "path": "s.csv",
                    "since": "2024-05-01T00:00:00",
                    "agg": "median",
                    "window": 30,
                },
                "s 5 median 30 None",
            )
        ],
        [
            (
                {
                    "path": "s.csv",
                    "since": "2024-05-01T00:00:00",
                    "agg": "mode",
                    "window": 0,
                    "column": 3,
                },
                [
                    '"agg" must be one of ["mean","median","sum"]',
                    '"window" must be >= 1',
                    '"column" must be a string',
                ],
            )
        ],
    ),
    Sample(
        head,
        [({"path": "a.csv", "n": 20}, "a.csv 20")],
        [({"path": "a.csv", "n": 5000}, ['"n" must be <= 1000'])],
    ),
    Sample(
        describe_columns,
        [({"columns": ["b", "a", "b"]}, "a,b")],
        [({"columns": ["a", 1]}, ['"columns[1]" must be a string'])],
    ),
    Sample(
        sample_rows,
        [({"path": "a.csv", "frac": 0.5}, "a.csv 0.5 None")],
        [
            (
                {"path": "a.csv", "frac": 0, "seed": 1.5},
                ['"frac" must be > 0', '"seed" must be an integer'],
            )
        ],
    ),
    Sample(
        kmeans,
        [({"k": 3}, "3 300")],
        [
            (
                {"k": 0, "max_iter": True},
                ['"k" must be >= 1', '"max_iter" must be an integer'],
            )
        ],
    ),
    Sample(
        set_weights,
        [({"weights": {"age": 1, "income": 0.5}}, "1.5")],
        [({"weights": {"age": "heavy"}}, ['"weights.age" must be a number'])],
    ),
    Sample(
        histogram,
        [
            ({"column": "age", "bins": 20}, "age 20"),
            ({"column": "age", "bins": "fd"}, "age fd"),
        ],
        [
            (
                {"column": "age", "bins": "many"},
                ['"bins" must be an integer or one of ["auto","fd"]'],
            )
        ],
    ),
    Sample(
        quantiles,
        [({"column": "age", "q": [0.25, 0.5, 0.75]}, "age 3")],
        [({"column": "age", "q": [0.5, 95]}, ['"q[1]" must be <= 1'])],
    ),
    Sample(
        correlate,
        [({"columns": ["a", "b"]}, "a~b pearson")],
        [
            (
                {"columns": ["a"], "method": "kendall"},
                [
                    '"columns" must have 2 items',
                    '"method" must be one of ["pearson","spearman"]',
                ],
            )
        ],
    ),
    Sample(
        train_test_split,
        [
            ({"split": {"train": 0.8, "test": 0.2}}, "1.0 None None"),
            (
                {"split": {"train": 0.7, "test": 0.3, "seed": 7}, "stratify": "y"},
                "1.0 7 y",
            ),
        ],
        [
            (
                {"split": {"train": "80%"}},
                [
                    '"split.train" must be a number',
                    'missing required property "split.test"',
                ],
            )
        ],
    ),
    Sample(
        fit_linear,
        [({"target": "y", "features": ["a", "b"], "norm": "l1"}, "y~a+b 1.0 l1")],
        [
            (
                {"target": "y", "features": [], "norm": "l3", "alpha": "big"},
                ['"alpha" must be a number', '"norm" must be one of ["l1","l2"]'],
            )
        ],
    ),
    Sample(
        log_level,
        [({"level": 20}, "INFO 20")],
        [
            ({"level": 25}, ['"level" must be one of [10,20,30]']),
            ({"level": "INFO"}, ['"level" must be one of [10,20,30]']),
        ],
    ),
    Sample(
        confusion_matrix,
        [({"labels": [0, 1, 1]}, "2 False")],
        [
            (
                {"labels": [0, 1.5], "normalize": 1},
                ['"labels[1]" must be an integer', '"normalize" must be a boolean'],
            )
        ],
    ),
    Sample(
        top_k,
        [({"column": "city", "k": 10}, "city 10")],
        [({"column": "city", "k": 4}, ['"k" must be one of [1,3,5,10]'])],
    ),
    Sample(
        crop,
        [
            (
                {
                    "box": {
                        "top_left": {"x": 0, "y": 0},
                        "bottom_right": {"x": 4, "y": 3},
                    }
                },
                "4.0",
            )
        ],
        [
            (
                {"box": {"top_left": {"x": 0}, "bottom_right": [4, 3]}},
                [
                    'missing required property "box.top_left.y"',
                    '"box.bottom_right" must be an object',
                ],
            )
        ],
    ),
    Sample(
        plot_points,
        [({"points": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}, "2 4.0 ")],
        [
            (
                {"points": [{"x": 1, "y": 2}, {"x": "3", "y": 4}]},
                ['"points[1].x" must be a number'],
            )
        ],
    ),
    Sample(
        connect,
        [({"config": {"host": "db", "database": "prod"}}, "db:5432/prod")],
        [
            (
                {"config": {"host": "db", "port": 70000}},
                [
                    '"config.port" must be <= 65535',
                    'missing required property "config.database"',
                ],
            )
        ],
    ),
    Sample(
        query,
        [({"filters": [{"column": "age", "op": ">", "value": 30}]}, "age>30.0 100")],
        [
            (
                {"filters": [{"column": "age", "op": "~", "value": None}]},
                [
                    '"filters[0].op" must be one of ["==","!=","<",">","<=",">="]',
                    '"filters[0].value" must be a number or a string',
                ],
            )
        ],
    ),
    Sample(
        rename_columns,
        [({"mapping": {"a": "alpha"}}, "a->alpha")],
        [({"mapping": {"a": 1}}, ['"mapping.a" must be a string'])],
    ),
    Sample(
        fill_missing,
        [({"values": {"a": 0, "b": 0.5, "c": "n/a"}}, "int,float,str")],
        [
            (
                {"values": {"a": None}},
                ['"values.a" must be an integer, a number or a string'],
            )
        ],
    ),
    Sample(
        pivot,
        [
            (
                {"index": "day", "columns": "shop", "values": "sales"},
                "day/shop/sales sum 0.0",
            )
        ],
        [
            (
                {"index": "day", "columns": "shop", "aggfunc": "max"},
                [
                    'missing required property "values"',
                    '"aggfunc" must be one of ["mean","median","sum"]',
                ],
            )
        ],
    ),
    Sample(
        merge,
        [({"left": "a.csv", "right": "b.csv", "on": ["id"]}, "a+b on ['id'] inner")],
        [
            (
                {"left": "a.csv", "right": "b.csv", "on": "id", "how": "outer"},
                ['"on" must be an array', '"how" must be one of ["inner","left"]'],
            )
        ],
    ),
    Sample(
        tag_runs,
        [({"run_ids": ["12345678-1234-4234-8234-123456789abc"]}, "4")],
        [({"run_ids": ["run-1"]}, ['"run_ids[0]" must be a UUID'])],
        format_only=True,
    ),
    Sample(
        price,
        [
            ({"amount": "12.345"}, "12.34 EUR"),
            ({"amount": 3, "currency": "USD"}, "3.00 USD"),
        ],
        [({"amount": "twelve"}, ['"amount" must be a decimal number'])],
    ),
    Sample(
        export,
        [
            (
                {"path": "out/x.csv", "fmt": "parquet", "overwrite": True},
                "x.parquet True",
            )
        ],
        [({"path": "x", "overwrite": "true"}, ['"overwrite" must be a boolean'])],
    ),
    Sample(
        concat,
        [({"paths": ["a.csv", "b.csv"]}, "a.csv+b.csv"), ({}, "")],
        [({"paths": ["a.csv", 2]}, ['"paths[1]" must be a string'])],
    ),
    Sample(
        set_options,
        [({"name": "plot", "alpha": 0.5, "width": 2}, "plot alpha=0.5,width=2.0")],
        [({"name": "plot", "alpha": "half"}, ['"alpha" must be a number'])],
    ),
    Sample(
        store,
        [({"key": "k", "value": {"a": [1, None]}}, "k={'a': [1, None]}")],
        [({"value": 1}, ['missing required property "key"'])],
    ),
    Sample(
        schedule,
        [({"at": "2024-01-01T06:30:00", "every": "PT1H"}, "6 3600.0")],
        [({"at": 1704090600}, ['"at" must be an ISO 8601 datetime'])],
    ),
    Sample(
        anomaly_threshold,
        [({"column": "latency", "z": 2.5}, "latency 2.5")],
        [({"column": "latency", "z": -1}, ['"z" must be > 0'])],
    ),
    Sample(
        save_figure,
        [({"name": "fig_1", "dpi": 300}, "fig_1.png 300")],
        [
            (
                {"name": "My Figure", "dpi": 10},
                ['"name" must match the pattern "^[a-z0-9_]+$"', '"dpi" must be >= 50'],
            )
        ],
    ),
    Sample(
        bin_ages,
        [({"edges": [0, 18, 65]}, "2 bins")],
        [({"edges": [0]}, ['"edges" must have at least 2 items'])],
    ),
    Sample(
        select_rows,
        [
            ({"ids": [1, 2]}, "[1, 2] None"),
            ({"ids": None, "query_text": "a > 1"}, "None a > 1"),
        ],
        [({"ids": [1, "2"]}, ['"ids[1]" must be an integer'])],
    ),
    Sample(
        resize,
        [({"size": [640, 480]}, "307200 True")],
        [({"size": [640, 480, 3]}, ['"size" must have at most 2 items'])],
    ),
    Sample(
        label_encode,
        [({"column": "y", "classes": ["a", "b"]}, "y 2"), ({"column": "y"}, "y 0")],
        [({"column": ["y"]}, ['"column" must be a string'])],
    ),
    Sample(
        notify,
        [({"channel": "slack", "message": "done"}, "slack:done:False")],
        [
            (
                {"channel": "pager", "message": 42},
                [
                    '"channel" must be one of ["email","slack"]',
                    '"message" must be a string',
                ],
            )
        ],
    ),
)
