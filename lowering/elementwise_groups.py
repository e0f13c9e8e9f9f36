"""Merge each kernel's elementwise loop nests into one ``linalg.generic`` per group, in time linear in the ops.

After ``graph-to-linalg`` a kernel holds one ``linalg.generic`` per graph op.
Upstream's ``linalg-fuse-elementwise-ops`` merges them a producer at a time,
each merge copying the regions of both ops into a new one, so a chain of n
ops costs n^2 / 2 op copies (2.9 s of a 5,000-op chain's compile), and it
takes only producers with one use: a value read by two ops of the kernel (a
diamond) stays a loop nest of its own.  The row fusion then clones it into
each row loop once per reader, and its producers once per clone of it: a
49-op kernel of a random graph became 14,204 linalg ops.

Here the groups are found first and each is built once, its members' body
ops moved (not copied) into one generic with a result per member used
outside the group.  The *candidates* are the all-parallel generics writing
one result at the identity map without reading it (what elementwise ops
lower to; their bodies read nothing from outside but their arguments).  A
candidate reading another at the identity map reads the scalar it computes at
the same point (an identity read is of the same sizes): such an edge is
*inner*; every other edge (a broadcast or transposed read, a reduction or any
other op between) is *outer*.  Each op gets a stage: the most, over its
operands, of the producer's stage, plus one across an outer edge into a
candidate.  A group is a set of candidates connected by inner edges, of one
stage.  A path between two members then never leaves the group (it would
cross an outer edge, and come back at a later stage), and entering another
group always raises the stage: the groups form a DAG, and one op per group is
a valid program.  Only connected candidates are merged, so sizes known at run
time only are equal within a group.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg

from graphfuse.dialect.matching import as_operation, op_id

__all__ = ["merge_elementwise_groups"]


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _is_candidate(op: ir.Operation) -> bool:
    """An elementwise generic: all loops parallel, one result written at the identity map, its init not read."""
    if op.name != "linalg.generic" or len(op.results) != 1 or len(op.regions[0].blocks) != 1:
        return False
    if not isinstance(op.results[0].type, ir.RankedTensorType):
        return False
    iterators = ir.ArrayAttr(op.attributes["iterator_types"])
    if any(str(it) != "#linalg.iterator_type<parallel>" for it in iterators):
        return False
    if _maps(op)[-1] != ir.AffineMap.get_identity(len(iterators)):
        return False
    body = op.regions[0].blocks[0]
    return not any(True for _ in body.arguments[len(body.arguments) - 1].uses)


def _left_to_upstream(op: ir.Operation) -> bool:
    """Whether ``op``'s one use is another linalg op reading it other than at the identity map (a reduction, a
    broadcast): upstream's fusion moves ``op`` into that op, so its value is never stored; in a group it would
    be a result of the group, written out and read back."""
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return False
    user = as_operation(uses[0].owner)
    if not user.name.startswith("linalg.") or "indexing_maps" not in user.attributes:
        return False
    return not (_is_candidate(user) and _maps(user)[uses[0].operand_number] == _maps(user)[-1])


class _Components:
    """Union-find over candidates (by op id)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, key: int) -> int:
        root = key
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while key != root:  # path compression
            self.parent[key], key = root, self.parent.get(key, key)
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb


def _captured(op: ir.Operation) -> list[ir.Value]:
    """The values ``op``'s regions read from outside ``op``."""
    inside: set[int] = set()
    found: list[ir.Value] = []

    def visit(nested: ir.Operation) -> ir.WalkResult:
        inside.add(op_id(nested))
        for value in nested.operands:
            owner = value.owner
            if isinstance(owner, ir.Block):
                if op_id(as_operation(owner.owner)) not in inside:
                    found.append(value)
            elif op_id(as_operation(owner)) not in inside:
                found.append(value)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _groups(ops: list[ir.Operation]) -> list[list[ir.Operation]]:
    """The groups of the kernel body ``ops`` (each in program order) with more than one member."""
    stage: dict[int, int] = {}  # op id -> stage
    components = _Components()
    candidate = {op_id(op) for op in ops if _is_candidate(op) and not _left_to_upstream(op)}
    for op in ops:
        key = op_id(op)
        if key not in candidate:
            reads = list(op.operands) + (_captured(op) if len(op.regions) else [])
            stage[key] = max((stage.get(op_id(as_operation(v.owner)), 0) for v in reads
                              if not isinstance(v.owner, ir.Block)), default=0)
            continue
        maps = _maps(op)
        identity = maps[-1]
        own = 0
        inner_producers: list[int] = []
        for k in range(len(op.operands) - 1):
            value = op.operands[k]
            if isinstance(value.owner, ir.Block):
                continue
            producer = op_id(as_operation(value.owner))
            if producer not in stage:  # defined outside the body (cannot happen in a function's block)
                continue
            inner = producer in candidate and maps[k] == identity
            if inner:
                inner_producers.append(producer)
            own = max(own, stage[producer] + (0 if inner else 1))
        stage[key] = own
        for producer in inner_producers:
            if stage[producer] == own:
                components.union(producer, key)
    grouped: dict[int, list[ir.Operation]] = {}
    for op in ops:
        if op_id(op) in candidate:
            grouped.setdefault(components.find(op_id(op)), []).append(op)
    return [members for members in grouped.values() if len(members) > 1]


def merge_elementwise_groups(func_op: ir.Operation) -> int:
    """Merge the elementwise groups of kernel ``func_op``'s body into one generic each; the generics merged away."""
    block = func_op.regions[0].blocks[0]
    merged = 0
    for members in _groups([as_operation(o) for o in block.operations]):
        with members[-1].location:
            _build(block, members)
        merged += len(members) - 1
    return merged


def _top_level(op: ir.Operation, block_owner: int) -> ir.Operation:
    """The op of the kernel's block that is or holds ``op``."""
    while op_id(as_operation(op.parent)) != block_owner:
        op = as_operation(op.parent)
    return op


def _build(block: ir.Block, members: list[ir.Operation]) -> None:
    """Replace ``members`` (in program order) by one generic where the last was; the ops between that use their
    results move after it."""
    inside = {op_id(m) for m in members}
    inputs: list[ir.Value] = []
    input_maps: list[ir.AffineMap] = []
    slot: dict[tuple[tuple[int, int], str], int] = {}  # a value read twice at one map is one input
    reads: list[list[int | None]] = []  # per member, per input: its input index, None for a member's scalar
    for member in members:
        maps = _maps(member)
        row: list[int | None] = []
        for k in range(len(member.operands) - 1):
            value = member.operands[k]
            if not isinstance(value.owner, ir.Block) and op_id(as_operation(value.owner)) in inside:
                row.append(None)
                continue
            key = (_value_key(value), str(maps[k]))
            if key not in slot:
                slot[key] = len(inputs)
                inputs.append(value)
                input_maps.append(maps[k])
            row.append(slot[key])
        reads.append(row)
    # a result per member used outside the group (or returned)
    outputs = [m for m in members if any(op_id(as_operation(u.owner)) not in inside for u in m.results[0].uses)]
    last = members[-1]
    identity = _maps(last)[-1]
    inits = [m.operands[len(m.operands) - 1] for m in outputs]
    maps_attr = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in (*input_maps, *[identity] * len(outputs))])
    with ir.InsertionPoint(last):
        fused = linalg.GenericOp([m.results[0].type for m in outputs], inputs, inits, maps_attr,
                                 last.attributes["iterator_types"])
    body = fused.regions[0].blocks.append(*[_element_type(v) for v in (*inputs, *inits)])
    with ir.InsertionPoint(body):  # the yielded values are set once the members are in
        terminator = linalg.YieldOp([body.arguments[len(inputs) + k] for k in range(len(outputs))])
    scalars: dict[int, ir.Value] = {}  # member -> the scalar it computes
    for member, row in zip(members, reads, strict=True):
        member_body = member.regions[0].blocks[0]
        for k, index in enumerate(row):
            argument = member_body.arguments[k]
            if index is None:
                argument.replace_all_uses_with(scalars[op_id(as_operation(member.operands[k].owner))])
            else:
                argument.replace_all_uses_with(body.arguments[index])
        ops = [as_operation(o) for o in member_body.operations]
        for op in ops[:-1]:
            op.move_before(terminator)
        scalars[op_id(member)] = ops[-1].operands[0]
    for k, member in enumerate(outputs):
        terminator.operands[k] = scalars[op_id(member)]
    position = {op_id(as_operation(o)): k for k, o in enumerate(block.operations)}
    here = position[op_id(as_operation(fused.operation))]
    owner = op_id(as_operation(block.owner))
    # ops before the fused one that read its results (and the ops before it that read theirs) go after it
    moved: dict[int, ir.Operation] = {}
    pending = [m.results[0] for m in outputs]
    while pending:
        value = pending.pop()
        for use in value.uses:
            user = as_operation(use.owner)
            if op_id(user) in inside:
                continue
            top = _top_level(user, owner)
            key = op_id(top)
            if key in moved or key in inside or position[key] > here:
                continue
            moved[key] = top
            pending.extend(top.results)
    for k, member in enumerate(outputs):
        member.results[0].replace_all_uses_with(fused.results[k])
    anchor = fused.operation
    for top in sorted(moved.values(), key=lambda op: position[op_id(op)]):
        top.move_after(anchor)
        anchor = top
    for member in reversed(members):
        member.erase()


def _value_key(value: ir.Value) -> tuple[int, int]:
    """An identity of a value of the kernel's block (wrappers' hashes are not one): its op and result number, or
    -1 and its argument number."""
    if isinstance(value.owner, ir.Block):
        return -1, ir.BlockArgument(value).arg_number
    return op_id(as_operation(value.owner)), ir.OpResult(value).result_number


def _element_type(value: ir.Value) -> ir.Type:
    t = value.type
    return ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t
