"""The PyTorch bridge (optional extra ``lightning_cas[torch]``): a module with exactly our parametrization,
its ``state_dict`` read back as a weight point, and PyTorch modules converted to (network, point).

``TorchNetwork(net)`` (``model``) is an ``nn.Module`` computing the same function as ``core.forward`` on a
``Network``: biases where the blocks have them, LayerNorm and ReLU/GELU/tanh where it has them, no
1/sqrt(d_head) scaling of the logits (the attention matrix is S = (K Y)^T (Q Y)), the causal mask keeps
key i <= query j, softmax over the keys. PyTorch convention on the outside: ``forward(x)`` takes x of
shape (batch, tokens, d_0) and returns (batch, tokens, d_out) (our token matrices are the transposes:
tokens are columns). Parameters are named ``blocks.{i}.{letter}`` (i from 0; q, k, v or w, o for
attention, stacked over heads as (H, rows, cols); u, d for an mlp; p for a linear block; biases b + the
letter, bo for the output bias): the same names ``system.points`` reads from .npz and .safetensors files,
so ``torch.save(model.state_dict())`` can be converted with ``safetensors.torch.save_file`` and given to
``dim --at``.

``from_torch(module)`` (``convert``) reads a module's layers as blocks and its weights exactly; what it
refuses (hooks, overridden forwards, tied weights, unsupported layers) is checked first and its result
is then proved against the module's own forward (``checks``). A module of the user's own class is read
through its ``torch.fx`` trace (``traced``); every weight keeps the state_dict entry it came from
(``WeightPoint.origins``, ``steps``).

Nothing else in lightning_cas imports torch.
"""

from lightning_cas.torch_bridge.convert import from_torch
from lightning_cas.torch_bridge.model import TorchNetwork, point_from_state_dict, state_dict_from_point

__all__ = ["TorchNetwork", "from_torch", "point_from_state_dict", "state_dict_from_point"]
