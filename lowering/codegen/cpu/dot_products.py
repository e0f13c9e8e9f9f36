"""The ``dot-products`` option the contraction passes share: its declaration, and its value checked and resolved."""

from __future__ import annotations

from typing import Any

from graphfuse.lowering.host import chosen_dot_products, dot_product_choice_problem
from graphfuse.pipelines.pass_base import GraphPass, PassContext, option

__all__ = ["dot_products_option", "resolved_dot_products"]


def dot_products_option() -> Any:
    """The ``dot-products`` option field of a pass (default ``host``)."""
    return option("host", "the dot products to compute on: host (the machine's), none, or bf16 and int8 joined by "
                          "'+'")


def resolved_dot_products(graph_pass: GraphPass, context: PassContext) -> frozenset[str]:
    """The dot products ``graph_pass``'s ``dot_products`` option names; the pass fails on a value it does not
    accept."""
    problem = dot_product_choice_problem(graph_pass.name, graph_pass.dot_products)
    if problem is not None:
        context.fail(problem)
    return chosen_dot_products(graph_pass.dot_products)
