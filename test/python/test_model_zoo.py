"""The model zoo at tiny size: every architecture of bench/zoo_models.py through torch.compile(backend=graphfuse),
strict (``fallback="error"``, no eager call), on a padded batch of 4 as users pass it (decoders padded on the
left, encoders on the right, one row down to a single token; the library's default cache), every floating-point
output checked against eager PyTorch.  ``make bench-zoo`` runs the same models at bench size with timings."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("torch", reason="needs the torch extra (pip install -e '.[torch]')")
pytest.importorskip("transformers", reason="needs the models extra (pip install -e '.[models]')")

import torch

from bench.zoo import relative_error, run_strict
from bench.zoo_models import TINY, ZOO, zoo_model

#: the fp32 error limit, relative to each output's largest magnitude (the acceptance of make bench-zoo)
TOLERANCE = 1e-4


@pytest.fixture(autouse=True)
def fresh_dynamo() -> None:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _check(name: str, dtype: torch.dtype, tolerance: float) -> None:
    zoo = ZOO[name]
    model = zoo_model(name, TINY).to(dtype)
    inputs = {key: value.to(dtype) if value.is_floating_point() else value
              for key, value in zoo.inputs(TINY, 4).items()}
    with torch.no_grad():
        want = model(**inputs)
    status, error, _, _ = run_strict(zoo, model, {4: inputs}, {4: want}, "graphfuse")
    assert status == "pass", status
    assert error is not None and error <= tolerance, f"error {error:.2e} against eager"


@pytest.mark.parametrize("name", list(ZOO))
def test_zoo_model_runs_strict_and_matches_eager(name: str) -> None:
    _check(name, torch.float32, TOLERANCE)


def test_padded_batches_are_what_users_pass() -> None:
    """The test above is only worth what its inputs are: rows padded on both sides, one of a single token."""
    mask = ZOO["llama"].inputs(TINY, 4)["attention_mask"]
    assert mask[0].all() and not mask[1, 0] and mask[1, -1] and mask[2, 0] and not mask[2, -1]
    assert mask[3].sum() == 1
    assert "attention_mask" in ZOO["bert"].inputs(TINY, 4) and "use_cache" not in ZOO["llama"].inputs(TINY, 4)


def test_relative_error_sees_nan_and_structure() -> None:
    want = {"logits": torch.ones(2, 3)}
    assert relative_error({"logits": torch.ones(2, 3)}, want) == 0.0
    assert relative_error({"logits": torch.full((2, 3), torch.nan)}, want) == float("inf")
    assert relative_error({"logits": torch.ones(3, 2)}, want) == float("inf")
    assert relative_error({"other": torch.ones(2, 3)}, want) == float("inf")


def test_the_lengths_row_counts_compiles_and_eager_calls(tmp_path) -> None:
    """bench.zoo's lengths row on a tiny Llama: after the strict calls (a batch of 4 and one of 1), the same
    compiled model at 5 more lengths compiles once more, with the length symbolic, and runs nothing in eager."""
    from bench import zoo

    out = tmp_path / "zoo.md"
    environment = dict(os.environ)
    assert zoo.main(["--models", "llama", "--size", "tiny", "--dtypes", "fp32", "--variants", "eager,graphfuse",
                     "--rounds", "1", "--markdown", str(out)]) == 0
    assert dict(os.environ) == environment  # the run's own compile cache is gone with it
    lines = out.read_text().splitlines()
    head = [cell.strip() for cell in next(line for line in lines if line.startswith("| model | family |")).split("|")]
    warm = next(line for line in lines if line.startswith("| llama | decoder | fp32 |"))
    cells = [cell.strip() for cell in warm.split("|")]
    warm_start, cold = cells[head.index("warm s (backend / first call)")], cells[head.index("new process s (gf / ind)")]
    assert "(outputs differ)" not in warm_start and " / " in warm_start, warm  # the warm start's column
    assert cold == "- / -", warm  # no new-process cold start without Inductor
    row = next(line for line in out.read_text().splitlines() if line.startswith("| llama | fp32 | "))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    # compiles, Dynamo's graphs (static, batch 1, symbolic: each compiled once), eager calls
    assert cells[2] == "3" and cells[3] == "3" and cells[4] == "0", row
    assert float(cells[5]) <= TOLERANCE, row  # the largest error against eager over the lengths
    assert len(cells) == 6 + len(zoo.LENGTHS.split(",")) and all(" / " in cell for cell in cells[6:])


def test_a_wrong_result_at_a_new_length_fails_the_lengths_row() -> None:
    """The lengths row checks each call against eager: a module off by one at the second length fails it."""
    from bench import zoo

    model = zoo_model("llama", TINY)
    calls = []

    def off_at_the_second_call(**inputs):
        calls.append(1)
        out = model(**inputs)
        out["logits"] = out["logits"] + (len(calls) > 1)
        return out

    case = zoo.Case("llama", "decoder", "fp32")
    zoo.run_lengths(ZOO["llama"], TINY, "fp32", model, off_at_the_second_call, [8, 17], case, TOLERANCE)
    assert case.length_failure.startswith("at 17 tokens: error "), case.length_failure
    assert "above 1.00e-04" in case.length_failure and not case.length_s


def test_the_lengths_must_fit_the_models(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import zoo

    assert zoo.main(["--models", "llama", "--size", "tiny", "--lengths", "8,90"]) == 1
    assert "length 90 is not in 2..48" in capsys.readouterr().err
    assert zoo.main(["--models", "llama", "--lengths", "8,x"]) == 1
    assert "--lengths must be whole numbers" in capsys.readouterr().err


def test_the_summary_gives_graphfuse_share_of_inductor_cold_start() -> None:
    from bench import zoo

    cases = [zoo.Case("a", "decoder", "fp32", status="pass", cold_process_s={"graphfuse": 2.0, "inductor": 10.0}),
             zoo.Case("b", "encoder", "fp32", status="pass", cold_process_s={"graphfuse": 4.0, "inductor": 10.0}),
             zoo.Case("c", "vision", "fp32", status="pass", cold_failure="graphfuse in a new process: why")]
    lines = zoo.summarize(cases)
    assert ("  - cold start in new processes, graphfuse's first call over Inductor's: geometric mean 0.28, "
            "largest 0.40 (b), at most 0.25 in 1 of 2") in lines, lines
    assert "  - cold start in new processes failed for 1: c: graphfuse in a new process: why" in lines, lines


@pytest.mark.slow
def test_the_cold_start_in_new_processes_times_both_variants() -> None:
    """bench.zoo's new-process cold start on a tiny Llama: both first calls timed, graphfuse's checked (a
    tolerance of 0 fails it)."""
    from bench import zoo

    case = zoo.Case("llama", "decoder", "fp32", status="pass")
    for variant in ("inductor", "graphfuse"):
        zoo.cold_process_case(case, TINY, variant, TOLERANCE)
    assert not case.cold_failure and set(case.cold_process_s) == {"inductor", "graphfuse"}, case
    assert all(seconds > 0 for seconds in case.cold_process_s.values())
    strict = zoo.Case("llama", "decoder", "fp32", status="pass")
    zoo.cold_process_case(strict, TINY, "graphfuse", 0.0)
    assert strict.cold_failure.startswith("graphfuse in a new process: error ") and not strict.cold_process_s
