"""The generated reference pages cannot drift from the catalog and the registry."""

from pathlib import Path

import pytest

from graphfuse.tools.gen_docs import PAGES

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", sorted(PAGES))
def test_generated_page_is_current(name: str) -> None:
    assert (DOCS / name).read_text() == PAGES[name](), f"docs/{name} is stale: run `make docs`"
