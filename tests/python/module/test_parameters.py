"""The Python module's keywords against Tandem's parameter schema (tandem.parameters(), the same
table the command line, sweeps and results are built from): every keyword the module takes is a
parameter's, and every parameter the schema gives a Python keyword is taken where it says."""
import inspect
import re

import numpy as np
import pytest

import tandem

# Arguments of a call that are its operands, not parameters.
OPERANDS = {"output_tensor", "A", "B", "bias", "config", "workspace"}


def signature_keywords(function):
    """The keyword names of a function: a Python one's (tandem.Context and ctx.ops check their
    arguments in Python, python/tandem/_context.py), or a pybind11 one's from its signature line."""
    try:
        return set(inspect.signature(function).parameters)
    except ValueError:
        pass
    first = function.__doc__.splitlines()[0]
    return set(re.findall(r"(\w+): ", first[first.index("("):]))


def test_the_python_layer_takes_the_modules_keywords():
    assert signature_keywords(tandem.Context.__init__) == signature_keywords(tandem._core.Context.__init__)
    assert signature_keywords(tandem.Ops.run) == signature_keywords(tandem._core.Ops.run)


def schema(place):
    return {p["python_keyword"] for p in tandem.parameters() if p["python_place"] == place}


def test_context_keywords_are_the_schemas():
    assert signature_keywords(tandem.Context.__init__) - {"self"} == schema("context")


def call_keywords():
    """The call's own keywords: the call's parameters, and the config parameters it also takes."""
    return schema("call") | {p["python_keyword"] for p in tandem.parameters() if p["python_call_keyword"]}


def test_call_keywords_are_the_schemas_and_the_operands():
    assert signature_keywords(tandem.Ops.run) - {"self"} == call_keywords() | OPERANDS


def test_an_ops_call_takes_the_same_keywords_as_run():
    ctx = tandem.Context(num_ranks=2, functional=False)
    assert signature_keywords(ctx.ops.allgather_gemm) == call_keywords() - {"op"} | OPERANDS


def test_every_config_keyword_and_alias_is_taken(tmp_path):
    ctx = tandem.Context(num_ranks=2, functional=False)
    A = ctx.zeros(128, 256, "fp16")
    B = ctx.zeros(256, 256, "fp16")
    C = ctx.zeros(256, 256, "fp32")
    # A valid value for allgather_gemm of each type (the tile is the default one); a key taken for
    # a knob instead would be refused by the op ("has no such knob").
    by_type = {"int": 12, "flag": False, "choice": "mesh"}
    by_name = {"base_m": 128, "base_n": 256, "variant": "streaming", "schedule": "data_parallel", "fault": "",
               "trace": str(tmp_path / "t.json"), "trace_ranks": [1], "trace_window_us": "0:5"}
    taken = 0
    for p in tandem.parameters():
        if p["python_place"] != "config":
            continue
        for key in [p["python_keyword"]] + p["python_aliases"]:
            value = by_name.get(p["name"], by_type.get(p["type"]))
            config = {key: value}
            if p["name"].startswith("trace_"):  # a trace's limits need the trace
                config["trace"] = by_name["trace"]
            ctx.ops.allgather_gemm(C, A, B, config=config)
            taken += 1
    assert taken >= 18


def test_gemm_sms_is_the_compute_blocks():
    ctx = tandem.Context(num_ranks=2, functional=False)
    A = ctx.zeros(1024, 2048, "fp16")
    B = ctx.zeros(2048, 1024, "fp16")
    C = ctx.zeros(2048, 1024, "fp32")
    # 64 output tiles: one compute block computes them in turn, the default 24 in parallel.
    by_alias = ctx.ops.allgather_gemm(C, A, B, config={"gemm_sms": 1}).results["pipelined_us"]
    by_name = ctx.ops.allgather_gemm(C, A, B, config={"compute_blocks": 1}).results["pipelined_us"]
    default = ctx.ops.allgather_gemm(C, A, B).results["pipelined_us"]
    assert by_alias == by_name != default


def test_iris_fused_config_fields_mean_what_the_schema_says():
    """tandem.iris's FusedConfig fields that are a parameter's keyword or alias (Iris's names:
    block_size_m, gemm_sms, num_sms, comm_sms, ...) set that parameter, and only it."""
    from tandem import _fused_config
    from tandem import iris
    by_keyword = {}
    for p in tandem.parameters():
        for key in [p["python_keyword"]] + p["python_aliases"]:
            by_keyword[key] = p
    fields = [f for f in iris.FusedConfig.__dataclass_fields__ if f in by_keyword and by_keyword[f]["type"] == "int"]
    assert {"block_size_m", "block_size_n", "num_sms", "gemm_sms", "comm_sms"} <= set(fields)
    for field in fields:
        info = tandem.Context(num_ranks=2, functional=False).ops.info("allgather_gemm")
        plain, _ = _fused_config.config_dict(iris.FusedConfig(), info, 2)
        config, _ = _fused_config.config_dict(iris.FusedConfig(**{field: 32}), info, 2)
        key = by_keyword[field]["python_keyword"]
        assert config[key] == 32, field
        assert {k: v for k, v in config.items() if k != key} == {k: v for k, v in plain.items() if k != key}, field


def test_a_context_refusal_names_the_keyword():
    with pytest.raises(tandem.Error, match=r"^Context: num_ranks=40: a functional context has 1\.\.32 ranks"):
        tandem.Context(num_ranks=40)


def test_a_knobs_words_work_in_config():
    """moe_ffn's routing takes its words as on the command line: zipf:S also sets zipf_s_pct; a
    wrong word is refused listing the words; an integer still works."""
    ctx = tandem.Context(num_ranks=2, functional=False)
    M, K, N = 32, 256, 512
    out = ctx.zeros((M, K), dtype="fp16")
    a = np.zeros((M, K), dtype=np.float16)
    b = np.zeros((K, N), dtype=np.float16)
    small = {"topk": 4, "experts_per_rank": 4, "compute_blocks": 4, "comm_blocks": 8}
    ws = ctx.ops.moe_ffn(out, a, b, config={"routing": "zipf:1.5", **small})
    assert "routing=2" in repr(ws) and "zipf_s_pct=150" in repr(ws)
    ws = ctx.ops.moe_ffn(out, a, b, config={"routing": 1, **small})
    assert "routing=1" in repr(ws)
    with pytest.raises(tandem.Error, match=r"config\['routing'\]: 'zipf:x' is neither a whole decimal number nor one of "
                                           r"round_robin, uniform, zipf or zipf:S"):
        ctx.ops.moe_ffn(out, a, b, config={"routing": "zipf:x", **small})
