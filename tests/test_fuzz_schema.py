"""Issue 23 item 7: scenario files generated from the runners' schemas (hystmech.runners
.SCHEMAS) with random types, sizes, nesting, missing and extra keys. Property: the CLI
exits 0, or 2 with exactly one line on stderr, within a time limit; never 1 (an
internal exception escaping as a failed run) and never a traceback.

The runs are kept cheap by tight work limits (a valid scenario asking for more work is
refused, exit 2) and by drawing the runners whose small runs take milliseconds; the CLI
runs in-process.
"""
import contextlib
import io
import json
import math
import signal
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hystmech import runners, schema
from hystmech.cli import main

RUNNERS = ("drive", "drive", "belt-tensioner-frf", "preisach-cable-protocol",
           "lugre-convergence")
LIMITS = ["--max-steps", "1e4", "--max-samples", "5e3", "--max-points", "2",
          "--max-memory", "256M"]
TIME_LIMIT_S = 30.0     # CPU seconds per case (the alarm, in wall time, only catches a hang)


class Hang(BaseException):
    pass


def _alarm(signum, frame):
    raise Hang("a generated scenario ran past the time limit")


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(v)


def toml_text(cfg: dict) -> str:
    top = [f"{json.dumps(k)} = {toml_value(v)}" for k, v in cfg.items()
           if not isinstance(v, dict)]
    tables = []
    for k, v in cfg.items():
        if isinstance(v, dict):
            tables.append(f"[{json.dumps(k)}]")
            tables += [f"{json.dumps(kk)} = {toml_value(vv)}" for kk, vv in v.items()]
    return "\n".join(top + tables) + "\n"


def nested(depth):
    return st.recursive(st.one_of(st.integers(-3, 3), st.floats(-1e3, 1e3)),
                        lambda s: st.one_of(st.lists(s, max_size=3),
                                            st.dictionaries(st.sampled_from("abc"), s,
                                                            max_size=2)),
                        max_leaves=depth)


ANY = st.one_of(
    st.sampled_from([True, "", "x", float("nan"), float("inf"), 1e300, -1e300, 1e-300, 0, -1,
                     2.5, [], [[]], {}, 10 ** 15, -(10 ** 15)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-10 ** 18, 10 ** 18),
    st.text(alphabet="ab_./-0", max_size=8),
    nested(6),
)


def value_for(spec, draw):
    """A value that matches ``spec`` (small numbers, often out of the runner's range)."""
    if spec is schema.REAL or isinstance(spec, schema._Number):
        return draw(st.one_of(st.floats(-10.0, 10.0), st.floats(1e-3, 1e3)))
    if spec is schema.COUNT:
        return draw(st.integers(0, 20))
    if spec is schema.INT:
        return draw(st.integers(-5, 50))
    if spec is schema.BOOL:
        return draw(st.booleans())
    if isinstance(spec, schema.Str):
        return draw(st.sampled_from(spec.choices) if spec.choices else st.text("abc", max_size=4))
    if spec is schema.FILE_STEM:
        return draw(st.sampled_from(["a", "fig", "../x", "/tmp/y", ".h", "ok-1"]))
    if isinstance(spec, schema.List):
        n = draw(st.integers(0, 4))
        return [value_for(spec.item, draw) for _ in range(n)]
    return draw(ANY)


def table_for(spec, draw):
    """A table matching ``spec`` with random keys left out (schema types, small values:
    many of them still out of range for the runner, e.g. a zero frequency)."""
    if isinstance(spec, schema.Required):
        spec = spec.spec
    if isinstance(spec, schema.Table):
        return {k: value_for(s, draw) for k, s in spec.keys.items()
                if k in spec.required or draw(st.integers(0, 2)) == 0}
    if isinstance(spec, schema.Element):
        typ = draw(st.sampled_from(["Dahl", "Dahl", "Nope"]))
        el = {"type": typ, "rho": draw(st.floats(1.0, 1e3)), "Fc": draw(st.floats(0.1, 10.0)),
              "w0": draw(st.floats(-0.5, 0.5))}
        return el
    return draw(ANY)


@st.composite
def scenarios(draw):
    """A scenario of one of RUNNERS built from its schema, then one mutation: a value of
    any type (nested arrays and tables too) for one key, an extra key or table, a key
    starting with _, a table replaced by a value, a deeply nested extra value, or none."""
    name = draw(st.sampled_from(RUNNERS))
    tables = runners.SCHEMAS[name]
    cfg = {"runner": name}
    for t, spec in tables.items():
        if isinstance(spec, (schema.MapOf, schema.ArrayOf)):
            continue
        if not isinstance(spec, schema.Required) and draw(st.booleans()):
            continue
        cfg[t] = table_for(spec, draw)
    mutation = draw(st.sampled_from(["none", "value", "value", "extra key", "extra table",
                                     "underscore", "wrong table type", "nested", "missing"]))
    tabs = [k for k, v in cfg.items() if isinstance(v, dict) and v]
    if mutation == "value" and tabs:
        t = draw(st.sampled_from(tabs))
        cfg[t][draw(st.sampled_from(sorted(cfg[t])))] = draw(ANY)
    elif mutation == "missing" and tabs:
        t = draw(st.sampled_from(tabs))
        del cfg[t][draw(st.sampled_from(sorted(cfg[t])))]
    elif mutation == "extra key" and tabs:
        cfg[draw(st.sampled_from(tabs))][draw(st.text("xyz_", min_size=1, max_size=5))] = 1.0
    elif mutation == "extra table":
        cfg[draw(st.text("qrs", min_size=1, max_size=5))] = {"a": 1}
    elif mutation == "underscore":
        cfg["_" + draw(st.text("ab", max_size=3))] = 1
    elif mutation == "wrong table type" and tabs:
        cfg[draw(st.sampled_from(tabs))] = draw(st.one_of(st.floats(), st.lists(st.integers())))
    elif mutation == "nested" and tabs:
        cfg[draw(st.sampled_from(tabs))]["deep"] = draw(nested(20))
    return cfg


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(cfg=scenarios())
def test_generated_scenarios_exit_0_or_2_with_one_line(cfg):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.toml"
        p.write_text(toml_text(cfg))
        err, out = io.StringIO(), io.StringIO()
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(int(10 * TIME_LIMIT_S))
        t0 = time.process_time()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = main(["run", str(p), "--out", str(Path(d) / "out"), *LIMITS])
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        assert time.process_time() - t0 < TIME_LIMIT_S
        text = err.getvalue()
        assert "Traceback" not in text, text
        assert code in (0, 2), (code, text, toml_text(cfg))
        if code == 2:
            lines = [ln for ln in text.splitlines() if ln.strip()]
            assert len(lines) == 1 and lines[0].startswith("hystmech: error: "), text
