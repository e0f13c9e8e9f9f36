"""mlir-opt's pass statistics and execution time reports, for pipelines that mix graphfuse and upstream passes.

Both reports are trees of :class:`ReportNode`: a pass, or an op-anchored
pipeline (``'func.func' Pipeline``) holding passes, and under a pass the
analyses it computed (``(A) DominanceInfo``, timing only).  Upstream steps
bring their nodes from their own pass manager's report (the runner captures
it and :func:`parse_statistics` / :func:`parse_timing` read it back);
graphfuse passes add one node each.  The pipeline runner splits
``func.func(a,b)`` into one step per pass; consecutive pipelines on the same
op are merged again here, as MLIR's pass manager merges sibling pipelines, so
the reports have the shape mlir-opt prints for the same pipeline.

Displays, as ``--mlir-pass-statistics-display`` and ``--mlir-timing-display``
choose them:

- statistics ``pipeline`` (the default): the tree, every pass, its
  statistics under it; ``list``: the passes that have statistics, merged by
  pass name (values summed), sorted by name;
- timing ``tree`` (the default): Parser, the tree, Output, Rest, Total;
  ``list``: every timer merged by name, with ``root`` and each pipeline's
  ``Pipeline Collection``, sorted by wall time, then Rest and Total.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "STATISTICS_DISPLAYS",
    "TIMING_DISPLAYS",
    "ReportNode",
    "merge_pipelines",
    "parse_statistics",
    "parse_timing",
    "report_header",
    "statistics_report",
    "timing_report",
]

STATISTICS_DISPLAYS = ("pipeline", "list")
TIMING_DISPLAYS = ("tree", "list")

_BANNER = "===" + "-" * 73 + "==="
_PIPELINE = re.compile(r"^'(.+)' Pipeline$")
_STATISTIC = re.compile(r"^\(S\)\s+(\d+)\s+(\S+)\s+-\s+(.*)$")
_TIME_ROW = re.compile(r"^\s*(\d+\.\d+) \(\s*[\d.]+%\)  (?:\s*(\d+\.\d+) \(\s*[\d.]+%\)  )?( *)(\S.*)$")


def report_header(title: str) -> str:
    return f"{_BANNER}\n{title.center(79).rstrip()}\n{_BANNER}\n"


@dataclass
class ReportNode:
    """A pass, pipeline or analysis row of a report."""

    name: str
    #: statistic name -> (value, description)
    statistics: dict[str, tuple[int, str]] = field(default_factory=dict)
    wall: float = 0.0
    user: float = 0.0
    children: list[ReportNode] = field(default_factory=list)

    @property
    def is_pipeline(self) -> bool:
        return _PIPELINE.match(self.name) is not None

    def add(self, other: ReportNode) -> None:
        """Add ``other``'s numbers to this node's (the same pass run again, e.g. on the next input chunk)."""
        self.wall += other.wall
        self.user += other.user
        for name, (value, description) in other.statistics.items():
            self.statistics[name] = (self.statistics.get(name, (0, description))[0] + value, description)
        if [c.name for c in self.children] == [c.name for c in other.children]:
            for mine, theirs in zip(self.children, other.children, strict=True):
                mine.add(theirs)


def merge_pipelines(nodes: list[ReportNode]) -> list[ReportNode]:
    """Consecutive pipelines on the same op as one (MLIR merges ``func.func(a),func.func(b)`` the same way)."""
    merged: list[ReportNode] = []
    for node in nodes:
        if merged and node.is_pipeline and merged[-1].name == node.name:
            last = merged[-1]
            merged[-1] = ReportNode(last.name, {}, last.wall + node.wall, last.user + node.user,
                                    merge_pipelines([*last.children, *node.children]))
        else:
            merged.append(node)
    return merged


def _tree(entries: list[tuple[int, ReportNode]]) -> list[ReportNode]:
    """Nodes from (indentation, node) rows, children indented deeper than their parent."""
    roots: list[ReportNode] = []
    stack: list[tuple[int, ReportNode]] = []
    for indent, node in entries:
        while stack and stack[-1][0] >= indent:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((indent, node))
    return roots


def parse_statistics(text: str) -> list[ReportNode]:
    """The nodes of a pass manager's statistics report in the pipeline display."""
    entries: list[tuple[int, ReportNode]] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("===") or "Pass statistics report" in line:
            continue
        stripped = line.lstrip()
        found = _STATISTIC.match(stripped)
        if found and entries:
            entries[-1][1].statistics[found.group(2)] = (int(found.group(1)), found.group(3))
        elif not found:
            entries.append((len(line) - len(stripped), ReportNode(stripped)))
    return _tree(entries)


def parse_timing(text: str) -> list[ReportNode]:
    """The nodes of a pass manager's execution time report in the tree display (without Rest and Total)."""
    entries: list[tuple[int, ReportNode]] = []
    for line in text.splitlines():
        found = _TIME_ROW.match(line)
        if found is None or found.group(4) in ("Rest", "Total"):
            continue
        first, second = float(found.group(1)), found.group(2)  # (user, wall), or wall alone
        user, wall = (first, float(second)) if second is not None else (first, first)
        entries.append((len(found.group(3)), ReportNode(found.group(4), wall=wall, user=user)))
    return _tree(entries)


def _statistic_lines(indent: int, node: ReportNode) -> list[str]:
    """``(S) value name - description`` lines, sorted by name, values and names aligned (as MLIR prints them)."""
    items = sorted(node.statistics.items())
    if not items:
        return []
    value_width = max(len(str(value)) for _, (value, _) in items)
    name_width = max(len(name) for name, _ in items)
    return [f"{' ' * indent}(S) {value:>{value_width}} {name:<{name_width}} - {description}"
            for name, (value, description) in items]


def statistics_report(nodes: list[ReportNode], display: str = "pipeline") -> str:
    lines = [report_header("... Pass statistics report ...").rstrip("\n")]
    if display == "list":
        merged: dict[str, ReportNode] = {}

        def collect(node: ReportNode) -> None:
            if node.is_pipeline:
                for child in node.children:
                    collect(child)
            elif node.statistics:
                merged.setdefault(node.name, ReportNode(node.name)).add(ReportNode(node.name, node.statistics))

        for node in nodes:
            collect(node)
        for name in sorted(merged):
            lines += [f"  {name}", *_statistic_lines(4, merged[name])]
    else:
        def show(node: ReportNode, indent: int) -> None:
            lines.append(" " * indent + node.name)
            lines.extend(_statistic_lines(indent + 2, node))
            for child in node.children:
                show(child, indent + 2)

        for node in merge_pipelines(nodes):
            show(node, 0)
    return "\n".join(lines) + "\n\n"


def _row(user: float | None, wall: float, user_total: float, wall_total: float, name: str) -> str:
    user_column = "" if user is None else f"  {user:8.4f} ({100 * user / (user_total or 1e-9):5.1f}%)"
    return f"{user_column}  {wall:8.4f} ({100 * wall / (wall_total or 1e-9):5.1f}%)  {name}"


def timing_report(nodes: list[ReportNode], wall_total: float, display: str = "tree") -> str:
    """The execution time report of ``nodes`` (the caller's Parser and Output rows included) in a run that took
    ``wall_total`` seconds; what no node accounts for is ``Rest``.

    As in MLIR, a timer's user time is the sum of its durations on every thread, its wall time the time that
    passed: the User Time column is shown when they differ (passes ran on several threads at once).
    """
    nodes = merge_pipelines(nodes)
    wall_total = max(wall_total, sum(n.wall for n in nodes))
    rest = ReportNode("Rest", wall=wall_total - sum(n.wall for n in nodes))
    rest.user = rest.wall
    user_total = rest.user + sum(n.user for n in nodes)
    threaded = user_total != wall_total

    def row(node: ReportNode, name: str) -> str:
        return _row(node.user if threaded else None, node.wall, user_total, wall_total, name)

    out = [report_header("... Execution time report ...").rstrip("\n"),
           f"  Total Execution Time: {wall_total:.4f} seconds", "",
           ("  ----User Time----" if threaded else "") + "  ----Wall Time----  ----Name----"]
    total = ReportNode("Total", wall=wall_total, user=user_total)
    if display == "list":
        merged: dict[str, ReportNode] = {"root": ReportNode("root", wall=wall_total, user=user_total)}

        def collect(node: ReportNode) -> None:
            names = [node.name]
            if node.is_pipeline:
                names.append(f"Pipeline Collection : ['{_PIPELINE.match(node.name).group(1)}']")
            for name in names:
                entry = merged.setdefault(name, ReportNode(name))
                entry.wall += node.wall
                entry.user += node.user
            for child in node.children:
                collect(child)

        for node in nodes:
            collect(node)
        for entry in sorted(merged.values(), key=lambda n: -n.wall):
            out.append(row(entry, entry.name))
    else:
        def show(node: ReportNode, indent: int) -> None:
            out.append(row(node, " " * indent + node.name))
            for child in node.children:
                show(child, indent + 2)

        for node in nodes:
            show(node, 0)
    out += [row(rest, "Rest"), row(total, "Total")]
    return "\n".join(out) + "\n"
