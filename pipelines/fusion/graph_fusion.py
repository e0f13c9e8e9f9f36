"""graph-fusion and ub-fusion: run every enabled fusion pass of their groups in one fixed order.

``graph-fusion{opt-level=2 enable-pass=a,b disable-pass=c,d backend=cpu}``
runs the GraphFusion group, then the UBFusion group (CANN's two phases, in
CANN's order: UB fusion works on the graph graph fusion produced);
``ub-fusion{...}`` (default backend npu) runs the UBFusion group alone, for
pipelines that place UB fusion elsewhere.  The switches of the other front
ends (MindSpore flags, the CANN switch file) reach them through the
pipeline; their own options override them (see pipelines/fusion/switches.py
for the layers).  Both decide with :func:`fusion_pass_enabled`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from mlir import ir

from graphfuse.pipelines import log
from graphfuse.pipelines.fusion.base import GRAPH_FUSION, UB_FUSION, FusionPass
from graphfuse.pipelines.fusion.switches import FusionSwitches
from graphfuse.pipelines.opt_levels import DEFAULT_OPT_LEVEL, opt_level_error
from graphfuse.pipelines.pass_base import GraphPass, OptionError, PassContext, option
from graphfuse.pipelines.registry import all_passes, canonical_pass_name, lookup_pass, pass_key, registration_order


def fusion_passes() -> list[type[FusionPass]]:
    """Every fusion pass, in execution order: by ``priority``, then by registration."""
    fusion = [cls for cls in all_passes() if issubclass(cls, FusionPass)]
    return sorted(fusion, key=lambda cls: (cls.priority, registration_order(cls)))


def _names(values: tuple[str, ...]) -> set[str]:
    """Canonical pass names of option or flag values (``stage.name`` reads as ``name``; aliases resolved)."""
    return {pass_key(v) for v in values}


def fusion_pass_enabled(cls: type[FusionPass], switches: FusionSwitches, *, opt_level: int, backend: str,
                        enable_pass: tuple[str, ...] = (), disable_pass: tuple[str, ...] = ()) -> bool:
    """Whether a fusion driver runs ``cls``: its default, then the front ends, then the driver's own options."""
    default = opt_level >= cls.opt_level > 0 and backend in cls.default_backends
    enabled = switches.decide(cls, default)
    key = canonical_pass_name(cls.name)
    if key in _names(enable_pass):
        enabled = True
    if key in _names(disable_pass):
        enabled = False
    if enabled and getattr(cls, "origin", None) == "user" and not _named_on(key, cls.group, switches, enable_pass):
        # TorchAir: experimental_config.pattern_fusion_pass switches the user's register_replacement patterns
        # with its own; a user pattern switched on by its own name still runs.
        governing = lookup_pass(PATTERN_FUSION_PASS)
        if governing is not None and not fusion_pass_enabled(governing, switches, opt_level=opt_level,
                                                              backend=backend, enable_pass=enable_pass,
                                                              disable_pass=disable_pass):
            enabled = False
    return enabled


#: The TorchAir pass whose switch also governs the patterns users register (register_replacement).
PATTERN_FUSION_PASS = "pattern_fusion_pass"


def _named_on(key: str, group: str, switches: FusionSwitches, enable_pass: tuple[str, ...]) -> bool:
    """Whether some front end switches the pass ``key`` on by its own name."""
    if key in _names(enable_pass) or key in _names(switches.flags.enable_pass):
        return True
    return switches.switch_file is not None and switches.switch_file.exact[group].get(key) is True


@dataclass(frozen=True)
class GraphFusion(GraphPass):
    name: ClassVar[str] = "graph-fusion"
    summary: ClassVar[str] = "Run the enabled fusion passes in their fixed order: GraphFusion, then UBFusion"
    #: the switch groups run, in this order
    groups: ClassVar[tuple[str, ...]] = (GRAPH_FUSION, UB_FUSION)

    opt_level: int = option(-1, "0 runs no fusion; a pass runs when its opt level is at most this "
                                "(-1: the flags' opt_level, or 2 when the flags have none)")
    enable_pass: tuple[str, ...] = option((), "passes to run even if off by default or switched off")
    disable_pass: tuple[str, ...] = option((), "passes not to run")
    backend: Literal["cpu", "npu"] = option("cpu", "target whose default pass set applies")

    def __post_init__(self) -> None:
        problem = opt_level_error(self.opt_level) if self.opt_level != -1 else None
        if problem is not None:
            raise OptionError(f"option 'opt-level' of pass '{self.name}': {problem}")
        groups = {canonical_pass_name(c.name): c.group for c in fusion_passes()}
        for name in (*self.enable_pass, *self.disable_pass):
            group = groups.get(pass_key(name))
            if group is None:
                raise OptionError(f"pass '{self.name}' does not know fusion pass '{name}'")
            if group not in self.groups:
                raise OptionError(f"fusion pass '{name}' is in the {group} group, which pass '{self.name}' "
                                  f"does not run ({', '.join(self.groups)})")

    def passes(self) -> list[type[FusionPass]]:
        """The fusion passes of this driver's groups, in execution order."""
        everything = fusion_passes()
        return [cls for group in self.groups for cls in everything if cls.group == group]

    def enabled(self, cls: type[FusionPass], switches: FusionSwitches) -> bool:
        if cls.group not in self.groups:
            return False
        return fusion_pass_enabled(cls, switches, opt_level=self.level(switches), backend=self.backend,
                                   enable_pass=self.enable_pass, disable_pass=self.disable_pass)

    def level(self, switches: FusionSwitches) -> int:
        """The opt level in force: the option when written, else the flags' ``--opt_level``, else 2."""
        if self.opt_level >= 0:
            return self.opt_level
        flags_level = switches.flags.opt_level
        return flags_level if flags_level is not None else DEFAULT_OPT_LEVEL

    def run(self, module: ir.Module, context: PassContext) -> None:
        switches = context.switches or FusionSwitches()
        passes = self.passes()
        log.info("graph kernel passes: " + ",".join(cls.name for cls in passes))
        for cls in passes:
            if not self.enabled(cls, switches):
                log.info(f"graph kernel pass {cls.name} is disabled")
                continue
            cls().execute(module, context)
            if context.dump is not None:
                context.dump(cls.name, module)


@dataclass(frozen=True)
class UbFusion(GraphFusion):
    name: ClassVar[str] = "ub-fusion"
    summary: ClassVar[str] = "Run the enabled UBFusion passes (CANN's UB fusion phase) in their fixed order"
    groups: ClassVar[tuple[str, ...]] = (UB_FUSION,)

    backend: Literal["cpu", "npu"] = option("npu", "target whose default pass set applies")
