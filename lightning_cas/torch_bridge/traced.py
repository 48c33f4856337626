"""A user's own ``nn.Module`` as blocks: its forward read by ``torch.fx`` as a chain of layers and ops.

Each node of the traced graph converts on its own: a layer (``call_module``) by the converter's own ``plan``
(so every child gets the same checks and limits as in a Sequential), F.relu, F.gelu, torch.tanh and F.silu
as activation blocks, F.linear and F.layer_norm on the module's own parameters as blocks, dropout in eval mode
skipped, and ``x + f(x)`` as a residual around the blocks between the add's two inputs. Anything else is
refused in one line naming the op and its source line; so is a graph that is not a chain (a value read
twice, other than by a residual add).

A residual around n blocks sets ``residual = n`` on the last of them. Around linear -> activation -> linear
it is one mlp block with a residual, as in ``nn.TransformerEncoderLayer``; around one attention or mlp block
(post-LN: ``ln1(x + attn(x))``) it converts in any version; around more (pre-LN: ``x + attn(ln1(x))``) only
once the network model reads residual groups (``groups``).
"""

from __future__ import annotations

import operator
import re
from typing import Callable

import torch
import torch.nn.functional as F
from torch import fx, nn

from lightning_cas.core.network import Activation, LayerNorm, Linear
from lightning_cas.errors import InputError
from lightning_cas.torch_bridge.checks import CALL, where
from lightning_cas.torch_bridge.residuals import fusable, fuse, with_residual
from lightning_cas.torch_bridge.steps import Step, exact

# the functions that are activation blocks (by identity), and the extra arguments each may take
_FUNCTIONS = (
    (F.relu, "relu", ("inplace",)),
    (torch.relu, "relu", ()),
    (F.gelu, "gelu", ("approximate",)),
    (torch.tanh, "tanh", ()),
    (F.tanh, "tanh", ()),
    (F.silu, "silu", ("inplace",)),
)
_METHODS = {"relu": "relu", "tanh": "tanh"}  # x.relu(), x.tanh()
_ADDS = (operator.add, torch.add)
_ATTENTION_ARGS = ("query", "key", "value", "key_padding_mask", "need_weights", "attn_mask", "average_attn_weights")
_READS = (
    "the supported layers, x + f(x) (a residual), F.relu, F.gelu, torch.tanh, F.silu, F.linear, F.layer_norm, F.dropout"
)


_TORCH = torch.__file__.rsplit("/", 1)[0] + "/"


class _Tracer(fx.Tracer):
    """fx's tracer with the converter's layers as leaves (a Sequential is traced through) and source lines."""

    def __init__(self, leaf: Callable):
        super().__init__()
        self.record_stack_traces = True
        self.leaf = leaf

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return self.leaf(m) or super().is_leaf_module(m, module_qualified_name)


def here(node: fx.Node) -> str:
    """Where a node comes from: file:line (the code) of the forward that made it, else the node's name."""
    frames = re.findall(r'File "([^"]+)", line (\d+), in \S+\n\s*(.*)', node.stack_trace or "")
    found = [frame for frame in frames if not frame[0].startswith(_TORCH)]  # the user's frames, not fx's
    if found:
        path, line, code = found[-1]
        return f"{path.rsplit('/', 1)[-1]}:{line} ({code.strip()})"
    return f"node {node.name}"


def _op(node: fx.Node) -> str:
    """An op as the user wrote it: torch.sin, operator.matmul, the tensor method .view(), the attribute .T."""
    target = node.target
    if node.op == "call_method":
        return f"the tensor method .{target}()"
    if target is getattr and len(node.args) == 2:
        return f"the attribute .{node.args[1]}"
    module = (getattr(target, "__module__", None) or "torch").replace("_operator", "operator")
    return f"{module}.{getattr(target, '__name__', repr(target))}"


def traced(module: nn.Module, path: str, plan: Callable, leaf: Callable, causal: bool) -> list[Step]:
    """The steps of a user's module, node by node of its traced forward (module docstring)."""
    name = where(path, module)
    own = [attr for attr in CALL if attr in vars(module)]
    if own:  # checked again for the whole tree later; here first, since the trace reads the class's forward
        raise InputError(
            f"{name} has its own {own[0]} set on the instance, so it need not compute what its class computes; "
            "from_torch reads only a class's own forward."
        )
    for attr in CALL[1:]:
        if getattr(type(module), attr, None) is not getattr(nn.Module, attr, None):
            raise InputError(
                f"{name} has its own {attr}; from_torch traces a module's forward, which its {attr} need not run."
            )
    if causal:
        raise InputError(
            f"{name}: causal = True converts attention called with a causal mask, and masks are not read from a "
            "traced forward; a user's module converts with causal = False."
        )
    try:
        graph = _Tracer(leaf).trace(module)
    except Exception as exc:  # the user's forward: whatever the trace raises is a refusal, not a crash
        text = (str(exc).strip().splitlines() or [""])[0][:160]
        raise InputError(
            f"{name}: torch.fx cannot trace its forward ({type(exc).__name__}: {text}); from_torch reads a user's "
            "module whose forward is a chain of layers and ops without control flow on tensor values."
        ) from None
    return _Chain(module, path, name, plan).run(graph)


class _Chain:
    """The blocks so far, the value that holds them (``current``) and the earlier values a residual may add."""

    def __init__(self, module: nn.Module, path: str, name: str, plan: Callable):
        self.module, self.prefix, self.name, self.plan = module, f"{path}." if path else "", name, plan
        self.steps: list[Step] = []
        self.count = 0  # blocks so far
        self.at: dict[fx.Node, int] = {}  # each value of the chain: the blocks before it
        self.current: fx.Node | None = None
        self.closed: list[tuple[int, int]] = []  # the residual groups so far: (first block, end)
        self.called: set[str] = set()
        self.pair: fx.Node | None = None  # the last attention's (output, weights)

    def refuse(self, node: fx.Node, problem: str):
        raise InputError(f"{self.name}: {problem} at {here(node)}; from_torch reads {_READS}, in a chain.")

    def run(self, graph: fx.Graph) -> list[Step]:
        if not any(node.op == "placeholder" for node in graph.nodes):
            raise InputError(f"{self.name}: its forward takes no input; from_torch reads a forward of one tensor.")
        for node in graph.nodes:
            if node.op == "placeholder":
                self._input(node)
            elif node.op == "output":
                if node.args[0] is not self.current:
                    self.refuse(node, "its forward returns something other than the value of its last layer")
            elif node.op == "call_module":
                self._layer(node)
            elif node.op in ("call_function", "call_method"):
                self._function(node)
            # get_attr: a parameter is read where the op that reads it converts (F.linear, F.layer_norm)
        return self.steps

    def _input(self, node: fx.Node) -> None:
        if not self.at:  # the first input: the tensor the module is called on
            self.current, self.at[node] = node, 0
        elif node.users:
            raise InputError(
                f"{self.name}: its forward reads {node.name} besides its first input; from_torch reads a "
                "forward of one tensor (batch, tokens, features)."
            )

    def _stream(self, node: fx.Node, value) -> None:
        """Refuse unless ``value`` is the chain's current value."""
        if value is not self.current or not isinstance(value, fx.Node):
            what = f"{value.name}, not the value just before it" if isinstance(value, fx.Node) else repr(value)[:40]
            self.refuse(node, f"{_op(node) if node.op != 'call_module' else node.target} reads {what} (not a chain)")
        if sum(1 for user in value.users if not self._skip(user, value)) > 1:
            self.refuse(node, f"{value.name} is read by {len(value.users)} ops (the graph branches, not a chain)")

    def _skip(self, user: fx.Node, value: fx.Node) -> bool:
        """``user`` adds ``value`` back as the skip input of a residual."""
        return self._is_add(user) and len(user.args) == 2 and value in user.args and user.args[0] is not user.args[1]

    def _advance(self, node: fx.Node, steps: list[Step]) -> None:
        self.steps += steps
        self.count += sum(len(step.blocks) for step in steps)
        self.current, self.at[node] = node, self.count

    # ---- layers
    def _layer(self, node: fx.Node) -> None:
        child, key = self.module.get_submodule(node.target), f"{self.prefix}{node.target}"
        if node.target in self.called and any(True for _ in child.parameters()):
            self.refuse(node, f"{key} is called twice (one weight in two places: a tied weight)")
        self.called.add(node.target)
        for inner in child.modules():
            if isinstance(inner, nn.MultiheadAttention) and not inner.batch_first:
                raise InputError(
                    f"{where(key, child)}: batch_first = False; a traced forward is called on (batch, tokens, "
                    "features), so its attention must have batch_first = True."
                )
        if isinstance(child, nn.MultiheadAttention):
            return self._attention(node, child, key)
        if isinstance(child, nn.Embedding):
            self.refuse(
                node, f"{key} takes token ids; an embedding converts first in an nn.Sequential, before the module"
            )
        if len(node.args) != 1 or node.kwargs:
            self.refuse(node, f"{key} is called with more than its input")
        self._stream(node, node.args[0])
        self._advance(node, self.plan(child, key))

    def _attention(self, node: fx.Node, child: nn.MultiheadAttention, key: str) -> None:
        given = dict(zip(_ATTENTION_ARGS, node.args), **node.kwargs)
        for arg in ("query", "key", "value"):
            self._stream(node, given.get(arg))
        for arg in ("key_padding_mask", "attn_mask", "is_causal"):
            if given.get(arg) not in (None, False):
                self.refuse(node, f"{key} is called with {arg} (masks are not read from a traced forward)")
        outputs = [u for u in node.users if u.target is operator.getitem and u.args[1] == 0]
        unused = [u for u in node.users if u.target is operator.getitem and not u.users]  # out, _ = attn(...)
        if len(outputs) != 1 or set(node.users) - set(outputs + unused):
            self.refuse(node, f"{key} returns (output, weights) and only its output [0] is read as a block")
        self._advance(node, self.plan(child, key))
        self.at.pop(node)  # the pair is not a value: its [0] is
        self.current, self.pair = None, node

    # ---- functions and methods
    def _is_add(self, node: fx.Node) -> bool:
        if node.op == "call_method":
            return node.target == "add"
        return node.op == "call_function" and any(node.target is f for f in _ADDS)

    def _function(self, node: fx.Node) -> None:
        target = node.target
        pair = node.args[0] if node.args else None
        if target is operator.getitem and pair is not None and pair is self.pair:
            if node.args[1] == 0:
                self.current, self.at[node] = node, self.count  # the attention's output
            return  # its weights, unused (checked with the attention)
        if target is F.layer_norm:
            return self._layer_norm(node)
        if target is F.linear:
            return self._linear(node)
        if self._is_add(node):
            return self._residual(node)
        function = _METHODS.get(target) if node.op == "call_method" else None
        extra: tuple = ()
        for f, label, accepted in _FUNCTIONS:
            if node.op == "call_function" and target is f:
                function, extra = label, accepted
        if function is not None:
            options = dict(zip(extra, node.args[1:]), **node.kwargs)
            if len(node.args) > 1 + len(extra) or set(options) - set(extra):
                self.refuse(node, f"{_op(node)} is called with {sorted(set(options) - set(extra))}")
            if options.get("approximate", "none") == "tanh":
                function = "gelu_tanh"
            elif options.get("approximate", "none") != "none":
                self.refuse(node, f"approximate = {options['approximate']!r} is not a form of GELU")
            self._stream(node, node.args[0])
            return self._advance(node, [Step(f"{self.name} {here(node)}", (Activation(function),), None, None, list)])
        if (node.op == "call_method" and target == "contiguous") or target is F.dropout:
            options = dict(zip(("p", "training", "inplace"), node.args[1:]), **node.kwargs)
            if target is F.dropout and options.get("training", True) and options.get("p", 0.5) > 0:
                self.refuse(node, "F.dropout in training mode makes the map random (call module.eval() first)")
            self._stream(node, node.args[0])
            return self._advance(node, [])
        self.refuse(node, f"{_op(node)} is not an op from_torch reads")

    def _parameter(self, node: fx.Node, given: dict, arg: str, shape: tuple | None):
        """(tensor, state_dict name) of an op's argument that must be a parameter of the module (of ``shape``
        where given), or None when it is None."""
        value = given.get(arg)
        if value is None:
            return None
        label = f"{_op(node)}'s {arg}"
        if not isinstance(value, fx.Node) or value.op != "get_attr":
            self.refuse(node, f"{label} is not a parameter of the module")
        owner, _, leaf = value.target.rpartition(".")
        tensor = getattr(self.module.get_submodule(owner), leaf)
        if (
            not isinstance(tensor, nn.Parameter)
            or tensor.dim() != 2 - (shape is not None)
            or shape not in (None, tuple(tensor.shape))
        ):
            self.refuse(node, f"{label} {value.target} is not a parameter of shape {shape or '(out, in)'}")
        if value.target in self.called:
            self.refuse(node, f"{value.target} is read twice (one weight in two places: a tied weight)")
        self.called.add(value.target)
        return tensor, f"{self.prefix}{value.target}"

    def _read(self, node: fx.Node, block, takes: int, gives: int, *parameters) -> None:
        """The chain goes on with one block whose weights are the given parameters, in order."""
        self._stream(node, node.args[0] if node.args else node.kwargs.get("input"))
        found = [p for p in parameters if p is not None]

        def read():
            return [v for tensor, name in found for v in exact(tensor, name)]

        self._advance(node, [Step(f"{self.name} {here(node)}", (block,), takes, gives, read)])

    def _layer_norm(self, node: fx.Node) -> None:
        """F.layer_norm over the features, its weight and bias parameters of the module: a layernorm block."""
        given = dict(zip(("input", "normalized_shape", "weight", "bias", "eps"), node.args), **node.kwargs)
        shape = given.get("normalized_shape")
        shape = [shape] if isinstance(shape, int) else shape
        if not isinstance(shape, (list, tuple)) or len(shape) != 1 or not isinstance(shape[0], int):
            self.refuse(node, f"F.layer_norm over {given.get('normalized_shape')!r} (only one axis, the features)")
        d, eps = shape[0], given.get("eps", 1e-5)
        gain, bias = (self._parameter(node, given, arg, (d,)) for arg in ("weight", "bias"))
        if not isinstance(eps, (int, float)):
            self.refuse(node, f"F.layer_norm's eps {eps!r} is not a number")
        block = LayerNorm(affine=gain is not None, bias=bias is not None, eps=float(eps))
        self._read(node, block, d, d, gain, bias)

    def _linear(self, node: fx.Node) -> None:
        """F.linear(x, weight, bias) on parameters of the module: a linear block."""
        given = dict(zip(("input", "weight", "bias"), node.args), **node.kwargs)
        weight = self._parameter(node, given, "weight", None)
        if weight is None:
            self.refuse(node, "F.linear without a weight")
        out, d = weight[0].shape
        bias = self._parameter(node, given, "bias", (out,))
        self._read(node, Linear(out, bias=bias is not None), d, out, weight, bias)

    def _residual(self, node: fx.Node) -> None:
        args = list(node.args)
        options = dict(node.kwargs)
        if len(args) == 3 and node.op == "call_function":
            options["alpha"] = args.pop()
        if len(args) != 2 or options.get("alpha", 1) != 1 or set(options) - {"alpha"}:
            self.refuse(node, f"{_op(node)} with {sorted(options)} is not x + f(x)")
        if self.current not in args:
            self.refuse(node, "the add reads neither input from the layer just before it (not a chain)")
        skip = args[1] if args[0] is self.current else args[0]
        if not isinstance(skip, fx.Node) or skip not in self.at or skip is self.current:
            self.refuse(node, f"the add's other input {getattr(skip, 'name', repr(skip)[:40])} is not an earlier value")
        self._stream(node, self.current)
        start = self.at[skip]
        n = self.count - start
        if n == 0:
            self.refuse(node, f"the add adds {skip.name} to itself, with no block between (2x is not a residual)")
        for first, end in self.closed:
            if first < start < end:
                self.refuse(node, "the residual crosses another residual (it starts inside it)")
            if end == self.count:
                self.refuse(node, "two residuals end at one block")
        inside = [i for i, s in enumerate(self.steps) if self._first(i) >= start]
        nested = any(end > start for _, end in self.closed)
        if len(inside) == 3 and not nested and fusable(*(self.steps[i] for i in inside)):
            self.steps[inside[0] :] = [fuse(*self.steps[inside[0] :])]
            self.count, n = self.count - 2, 1
        self.closed.append((start, self.count))
        self.steps[-1] = with_residual(self.steps[-1], n, where_=f"{self.name}: the residual add at {here(node)}")
        self.current, self.at[node] = node, self.count

    def _first(self, i: int) -> int:
        """The number of blocks before step i."""
        return sum(len(step.blocks) for step in self.steps[:i])
