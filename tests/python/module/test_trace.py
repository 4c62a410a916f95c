"""A call's trace from Python (config={"trace": path}): the file prof_analysis/report.py reads,
the rank filter as a list, a pathlib.Path, and the refusals naming the config key."""
import json
import pathlib
import sys

import pytest

import tandem

REPO = pathlib.Path(__file__).resolve().parents[3]


def problem():
    ctx = tandem.Context(num_ranks=2, functional=False)
    return ctx, ctx.zeros(256, 512, "fp16"), ctx.zeros(512, 512, "fp16"), ctx.zeros(512, 512, "fp32")


def test_a_call_writes_a_trace_that_report_py_reads(tmp_path):
    ctx, A, B, C = problem()
    path = tmp_path / "t.json"  # a pathlib.Path is taken as the file name
    ws = ctx.ops.allgather_gemm(C, A, B, config={"trace": path, "all_views": True})
    t = json.loads(path.read_text())
    other = t["otherData"]
    assert other["source"] == "api call" and other["op"] == "allgather_gemm"
    assert other["view_end_us"] - other["view_start_us"] == pytest.approx(ws.results["pipelined_us"], abs=1e-6)
    assert other["compute_only_us"] == pytest.approx(ws.results["compute_only_us"])
    sys.path.insert(0, str(REPO / "prof_analysis"))
    try:
        import check_trace
        import report
        import tandem_trace
    finally:
        sys.path.pop(0)
    findings, _ = check_trace.check(t, str(path))  # the format Perfetto and the tools read
    assert dict(findings.failures) == {}
    a = report.analyze(tandem_trace.load_trace(str(path)))
    assert a["warnings"] == []  # the busy totals of otherData and the events agree
    assert a["meta"]["ranks"] == 2 and a["meta"]["m"] == 512


def test_trace_ranks_takes_a_list(tmp_path):
    ctx, A, B, C = problem()
    path = tmp_path / "r1.json"
    ctx.ops.allgather_gemm(C, A, B, config={"trace": str(path), "trace_ranks": [1], "trace_window_us": "0:50"})
    t = json.loads(path.read_text())
    assert {e["pid"] for e in t["traceEvents"] if e["ph"] == "X"} == {1}
    assert t["otherData"]["filter"] == {"ranks": [1], "window_us": [0.0, 50.0]}


@pytest.mark.parametrize("config, async_op, error, words", [
    ({"trace": "t.json", "trace_ranks": [0, 5]}, False, tandem.Error,
     "config['trace_ranks'] names rank 5; the context has 2 ranks"),
    ({"trace_ranks": "0"}, False, tandem.Error, "give config['trace'] (the file to write) too"),
    ({"trace": "t.json", "trace_ranks": "0,x"}, False, tandem.Error,
     "config['trace_ranks']: ranks '0,x': expected a comma-separated"),
    ({"trace": "t.json", "trace_ranks": [0, True]}, False, TypeError,
     "config['trace_ranks'] = [0, True]: must be ranks (integers)"),
])
def test_refusals_name_the_config_key(tmp_path, monkeypatch, config, async_op, error, words):
    monkeypatch.chdir(tmp_path)
    ctx, A, B, C = problem()
    with pytest.raises(error) as e:
        ctx.ops.allgather_gemm(C, A, B, config=config, async_op=async_op)
    assert words in str(e.value)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_async_calls_trace_holds_the_calls_it_overlapped(tmp_path):
    """Written by the barrier: both calls' kernels, both calls listed, report.py reads it whole."""
    ctx, A, B, C = problem()
    C2 = ctx.zeros(512, 512, "fp32")
    path = tmp_path / "both.json"
    first = ctx.ops.allgather_gemm(C, A, B, config={"trace": path}, async_op=True)
    second = ctx.ops.allgather_gemm(C2, A, B, async_op=True)
    assert not path.exists()
    with pytest.raises(tandem.Error, match="the trace of an async allgather_gemm call is open until barrier"):
        ctx.ops.allgather_gemm(ctx.zeros(512, 512, "fp32"), A, B, config={"trace": tmp_path / "x.json"})
    ctx.barrier()
    t = json.loads(path.read_text())
    calls = t["otherData"]["calls"]
    assert [c["op"] for c in calls] == ["allgather_gemm", "allgather_gemm"]
    assert calls[0]["pipelined_us"] == pytest.approx(first.results["pipelined_us"])
    assert calls[1]["pipelined_us"] == pytest.approx(second.results["pipelined_us"])
    sys.path.insert(0, str(REPO / "prof_analysis"))
    try:
        import check_trace
        import report
        import tandem_trace
    finally:
        sys.path.pop(0)
    # The second call's blocks have tracks of their own ("AIC0 CUBE (lane 2)"): no slices overlap
    # on a track, as Perfetto needs.
    findings, _ = check_trace.check(t, str(path))
    assert dict(findings.failures) == {}
    assert any(e["args"]["name"].endswith(" (lane 2)") for e in t["traceEvents"] if e.get("name") == "thread_name")
    assert [c["lane"] for c in calls] == [1, 2]
    a = report.analyze(tandem_trace.load_trace(str(path)))
    assert a["warnings"] == []
    # Two GEMMs of 24 blocks each at once on 24 AIC cores: the report says the chip could not.
    over = a["ranks"][0]["oversubscribed"]["AIC"]
    assert over["cores"] == 24 and over["peak_blocks"] > 24
    assert over["streams"] == ["allgather_gemm[2] compute", "compute"]
    assert not (tmp_path / "x.json").exists()
