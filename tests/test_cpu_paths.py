"""`model` says where each pass runs on this CPU and what was measured on a CPU of its kind, never a ratio from
another kind."""

from __future__ import annotations

from tools.models.cpu import MEASURED, CpuKind, kind_of, this_cpu


def test_the_kind_of_a_cpu_follows_the_flags_its_kernels_use():
    assert kind_of(frozenset({"avx2", "fma"})) is CpuKind.AVX2
    assert kind_of(frozenset({"avx2", "avx512f", "avx512bw"})) is CpuKind.AVX512
    assert kind_of(frozenset({"avx2", "avx512f", "avx512_vnni"})) is CpuKind.AVX512_VNNI
    assert kind_of(frozenset({"avx2", "avx512f", "avx512_vnni", "amx_int8", "amx_tile"})) is CpuKind.AMX
    assert kind_of(frozenset({"sse4_2"})) is CpuKind.OTHER


def test_model_says_where_passes_run_and_what_this_kind_of_cpu_measured(run):
    cpu = this_cpu()
    full = run("model").result
    table = dict(zip(full.table("model")["property"], full.table("model")["value"]))
    # a chat's texts run on PyTorch until the first bulk batch has made the ONNX export; then everything does
    assert table["bulk passes"] == "ONNX Runtime fp32" and table["attention passes"] == "PyTorch fp32"
    assert table["chat passes"] in ("PyTorch fp32", "ONNX Runtime fp32")
    assert ("batches of 16 or more" in full.text) == (table["chat passes"] == "PyTorch fp32")
    assert cpu.name in table["CPU"] and cpu.family_model in table["CPU"]
    measured = MEASURED.get(cpu.kind)
    if measured is None:
        assert "no CPU of this kind has been measured" in full.text
    else:
        assert measured.cpu in full.text and measured.full in full.text
        assert all(row.cpu not in full.text for kind, row in MEASURED.items() if kind is not cpu.kind)
    fast = run("model minilm:int8").result
    assert "ONNX Runtime int8" in fast.text and "PyTorch int8" in fast.text
    if measured is not None:
        assert measured.fast in fast.text
