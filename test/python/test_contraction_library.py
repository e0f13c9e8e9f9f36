"""The contraction schedules' transform-dialect library (lowering/schedules): each file loads on its
own, a schedule recorded on an op computes what the op computes, and every schedule the strategy records is one
the library runs."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir
from mlir.dialects import transform

from graphfuse.dialect.context import new_context
from graphfuse.lowering.codegen.cpu.lower import lowered_entry
from graphfuse.lowering.codegen.cpu.pipeline import cpu_pipeline_text, parallel_loops, run_cpu_pipeline
from graphfuse.lowering.contraction import block_contractions
from graphfuse.lowering.runtime import jit_lowered
from graphfuse.lowering.schedules import library as contraction_library
from graphfuse.lowering.schedules.library import SCHEDULE, SCHEDULES_DIR, sequence_parameters

FILES = sorted(SCHEDULES_DIR.glob("*.mlir"))


def _sequences(module: ir.Module) -> dict[str, transform.NamedSequenceOp]:
    return {op.sym_name.value: op for op in module.body.operations if isinstance(op, transform.NamedSequenceOp)}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_each_file_loads_on_its_own(path) -> None:
    """A file parses and verifies alone: the steps it takes from common.mlir are declared, with the signature
    common.mlir defines them with."""
    with new_context():
        module = ir.Module.parse(path.read_text())
        assert module.operation.verify()
        common_module = ir.Module.parse((SCHEDULES_DIR / "common.mlir").read_text())  # alive while its ops are read
        common = _sequences(common_module)
        for name, sequence in _sequences(module).items():
            if not len(sequence.regions[0].blocks):
                assert name in common, f"{path.name} declares @{name}, which common.mlir does not define"
                assert sequence.function_type == common[name].function_type, name


def test_no_sequence_is_defined_twice() -> None:
    seen: dict[str, str] = {}
    with new_context():
        for path in FILES:
            module = ir.Module.parse(path.read_text())
            for name, sequence in _sequences(module).items():
                if len(sequence.regions[0].blocks):
                    assert name not in seen, f"@{name} is defined in {seen[name]} and {path.name}"
                    seen[name] = path.name


def _run(text: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Compile linalg ``text`` with the CPU pipeline, its ops tiled by the schedules they carry
    (no select-contraction-schedules before apply-contraction-schedules), and call it."""
    context = new_context()
    with context, ir.Location.unknown():
        module = ir.Module.parse(text)
        pipeline = cpu_pipeline_text("f", 1).replace("select-contraction-schedules{threads=1},", "")
        run_cpu_pipeline(module, pipeline)
        lowered = lowered_entry(context, module, "f", parallel_loops(1)[1])
    return jit_lowered(lowered, opt_level=2)(*inputs)


def test_register_tiles_compute_the_product() -> None:
    """Tiles that divide nothing evenly (37 rows in tasks of 16, tiles of 6 x 16 over 50 columns): the peeled
    remainders compute their part too."""
    text = """func.func @f(%a: tensor<37x29xf32>, %b: tensor<29x50xf32>) -> tensor<37x50xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<37x50xf32>
      %c = linalg.fill ins(%zero : f32) outs(%e : tensor<37x50xf32>) -> tensor<37x50xf32>
      %r = linalg.matmul {graph.schedule = {sequence = "register_tiles", rows_per_task = 16 : i64,
                                            block_columns = 32 : i64, block_depth = 8 : i64, tile_rows = 6 : i64,
                                            tile_columns = 16 : i64}}
        ins(%a, %b : tensor<37x29xf32>, tensor<29x50xf32>) outs(%c : tensor<37x50xf32>) -> tensor<37x50xf32>
      return %r : tensor<37x50xf32>
    }"""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((37, 29)).astype(np.float32), rng.standard_normal((29, 50)).astype(np.float32)
    (got,) = _run(text, [a, b])
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


def test_direct_conv_with_epilogue_computes_the_convolution() -> None:
    """A 3x3 convolution of 27 output columns (a tile of 16 and the ladder's 8, 2 and 1) with its bias add."""
    text = """#in = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
    #w = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
    #out = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
    #id = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
    #bias = affine_map<(n, f, oh, ow) -> (f)>
    func.func @f(%x: tensor<1x3x6x29xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x4x27xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<1x8x4x27xf32>
      %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x27xf32>) -> tensor<1x8x4x27xf32>
      %c = linalg.generic {indexing_maps = [#in, #w, #out],
          iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"],
          graph.schedule = {sequence = "direct_conv_with_epilogue", task_rows = 2 : i64, vector_columns = 16 : i64,
                            tile_dim1 = 4 : i64, tile_dim2 = 1 : i64, remainder_width_0 = 8 : i64,
                            remainder_width_1 = 4 : i64, remainder_width_2 = 2 : i64, remainder_width_3 = 1 : i64,
                            remainder_width_4 = 1 : i64}}
        ins(%x, %w : tensor<1x3x6x29xf32>, tensor<8x3x3x3xf32>) outs(%fill : tensor<1x8x4x27xf32>) {
      ^bb0(%a: f32, %bw: f32, %acc: f32):
        %s = math.fma %a, %bw, %acc : f32
        linalg.yield %s : f32
      } -> tensor<1x8x4x27xf32>
      %out = tensor.empty() : tensor<1x8x4x27xf32>
      %r = linalg.generic {indexing_maps = [#id, #bias, #id],
                           iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%c, %b : tensor<1x8x4x27xf32>, tensor<8xf32>) outs(%out : tensor<1x8x4x27xf32>) {
      ^bb0(%v: f32, %bv: f32, %o: f32):
        %s = arith.addf %v, %bv : f32
        linalg.yield %s : f32
      } -> tensor<1x8x4x27xf32>
      return %r : tensor<1x8x4x27xf32>
    }"""
    rng = np.random.default_rng(1)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((1, 3, 6, 29), (8, 3, 3, 3), (8,)))
    expected = np.zeros((1, 8, 4, 27), np.float64)
    for kh in range(3):
        for kw in range(3):
            expected += np.einsum("nchw,fc->nfhw", x[:, :, kh:kh + 4, kw:kw + 27], w[:, :, kh, kw])
    (got,) = _run(text, [x, w, b])
    np.testing.assert_allclose(got, expected + b[None, :, None, None], rtol=1e-5, atol=1e-5)


def _recorded(text: str, threads: int, monkeypatch: pytest.MonkeyPatch) -> list[ir.DictAttr]:
    """The schedules block-contractions records on ``text``'s ops and applies, in the order it applies them."""
    recorded: list[ir.DictAttr] = []
    apply = contraction_library.apply_schedule

    def spy(module: ir.Module, schedule: ir.Attribute, what: str) -> None:
        recorded.append(ir.DictAttr(schedule))
        apply(module, schedule, what)

    for module_name in ("strategy", "application"):
        monkeypatch.setattr(f"graphfuse.lowering.contraction.{module_name}.apply_schedule", spy)
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        block_contractions(module, threads)
        assert SCHEDULE not in str(module), "a schedule attribute is left on an op"
        for schedule in recorded:
            name = ir.StringAttr(schedule["sequence"]).value
            given = sorted(entry.name for entry in schedule if entry.name != "sequence")
            parameters = sequence_parameters(module.context, name)
            assert parameters is not None and sorted(parameters) == given, (name, parameters, given)
        return [ir.StringAttr(s["sequence"]).value for s in recorded]


def test_the_strategy_records_schedules_the_library_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A linear layer with a bias and a GELU-like epilogue, attention's two batched products and a short
    product with a weight read at run time: each schedule recorded names a sequence with exactly its
    parameters."""
    text = """#id = affine_map<(i, j) -> (i, j)>
    #row = affine_map<(i, j) -> (j)>
    func.func @f(%x: tensor<256x512xf32>, %w: tensor<512x256xf32>, %bias: tensor<256xf32>,
                 %q: tensor<12x64x32xf32>, %k: tensor<12x64x32xf32>, %v: tensor<12x64x32xf32>,
                 %t: tensor<2x128xf32>, %wt: tensor<96x128xf32>)
        -> (tensor<256x256xf32>, tensor<12x64x32xf32>, tensor<2x96xf32>) {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<256x256xf32>
      %c = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
      %p = linalg.matmul ins(%x, %w : tensor<256x512xf32>, tensor<512x256xf32>) outs(%c : tensor<256x256xf32>)
        -> tensor<256x256xf32>
      %eg = tensor.empty() : tensor<256x256xf32>
      %g = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%p, %bias : tensor<256x256xf32>, tensor<256xf32>) outs(%eg : tensor<256x256xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %s = arith.addf %a, %b : f32
        %h = math.tanh %s : f32
        linalg.yield %h : f32
      } -> tensor<256x256xf32>
      %et = tensor.empty() : tensor<12x32x64xf32>
      %kt = linalg.transpose ins(%k : tensor<12x64x32xf32>) outs(%et : tensor<12x32x64xf32>) permutation = [0, 2, 1]
      %es = tensor.empty() : tensor<12x64x64xf32>
      %cs = linalg.fill ins(%zero : f32) outs(%es : tensor<12x64x64xf32>) -> tensor<12x64x64xf32>
      %s = linalg.batch_matmul ins(%q, %kt : tensor<12x64x32xf32>, tensor<12x32x64xf32>)
        outs(%cs : tensor<12x64x64xf32>) -> tensor<12x64x64xf32>
      %eo = tensor.empty() : tensor<12x64x32xf32>
      %co = linalg.fill ins(%zero : f32) outs(%eo : tensor<12x64x32xf32>) -> tensor<12x64x32xf32>
      %o = linalg.batch_matmul ins(%s, %v : tensor<12x64x64xf32>, tensor<12x64x32xf32>)
        outs(%co : tensor<12x64x32xf32>) -> tensor<12x64x32xf32>
      %er = tensor.empty() : tensor<2x96xf32>
      %cr = linalg.fill ins(%zero : f32) outs(%er : tensor<2x96xf32>) -> tensor<2x96xf32>
      %r = linalg.matmul indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                          affine_map<(i, j, k) -> (i, j)>]
        ins(%t, %wt : tensor<2x128xf32>, tensor<96x128xf32>) outs(%cr : tensor<2x96xf32>) -> tensor<2x96xf32>
      return %g, %o, %r : tensor<256x256xf32>, tensor<12x64x32xf32>, tensor<2x96xf32>
    }"""
    names = _recorded(text, 2, monkeypatch)
    assert any(name.startswith("batch_tasks") for name in names), names
    assert any(name.startswith("packed_tiles_with_epilogue") for name in names), names
    assert any(name.startswith("row_dot_") for name in names), names
    assert "pack_panels" in names or "pack_transposed_panels" in names, names
