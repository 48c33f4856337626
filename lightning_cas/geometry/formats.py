"""Results as Macaulay2 input and as LaTeX: what ``--format m2`` and ``--format latex`` print.

The Macaulay2 form is a script that loads the LightningCAS package (by name: install it once with
``lightning-cas notebook --install-package``) and defines, under names that say what they are:

* ``N`` the network, built by the package's ``neuralNetwork(inputWidth, tokens, {blocks})`` from the
  values the templates get (``macaulay2.network.network_call``), so ``neurovarietyDimension N`` and
  every other package function recompute the result on the same network;
* ``R`` the ring of the result's ideals (coordinates y_i, or the weights for a fiber);
* ``I`` the variety's ideal, ``S`` the singular locus, ``B`` the Zariski closure of the boundary,
  ``F`` the fiber's ideal, where the result has them;

plus the components or pieces as lists where the command has them, under names that neither
Macaulay2 nor the package takes. Where a command found no ideal (an incomplete locus, the fast path
of ``fiber``) the name is ``null`` and a comment says why. Everything else (provenance, verdicts,
what each y_i is) is in comments.

Each result type writes its own body beside its fields (``m2_lines``, ``latex_lines`` in
``lightning_cas.results``); here the header, the package and the network ``N`` are put before it, the
parts only Macaulay2's side knows. Every polynomial is read back through the strict parser and written
again before it is printed, so a result file that was tampered with cannot smuggle Macaulay2 code into
the script; the network is written from its validated integers only.
"""

from __future__ import annotations

from lightning_cas.backends.m2 import JACOBIAN_MAX_ENTRIES, jacobian_size
from lightning_cas.errors import UnsupportedError
from lightning_cas.macaulay2.network import network_call, network_comments
from lightning_cas.macaulay2.render import load_line
from lightning_cas.results.formats import M2Context, header

FORMATS = ("text", "json", "m2", "latex")
CONTEXT = M2Context(jacobian_entries=jacobian_size, jacobian_limit=JACOBIAN_MAX_ENTRIES)


def _network(arch) -> list[str]:
    """The lines that load the package and define ``N``, the result's network (softmax: refused)."""
    try:
        call = network_call(arch)
    except UnsupportedError:
        raise UnsupportedError(
            "--format m2 builds the network in Macaulay2, which builds polynomial networks only; "
            "this one has softmax attention (use --format text or json)."
        ) from None
    return [load_line(), *network_comments(arch), f"N = {call};"]


def m2_script(res) -> str:
    """The result as Macaulay2 input (see the module docstring); ValueError for a result without a
    Macaulay2 form, UnsupportedError for a network Macaulay2 cannot build (softmax)."""
    body = getattr(res, "m2_lines", None)
    if body is None:
        raise ValueError(f"no Macaulay2 form for a {type(res).__name__}")
    return "\n".join(header(res) + _network(res.architecture) + body(CONTEXT)) + "\n"


def latex_document(res) -> str:
    """The result's ideals (and coordinates) as a LaTeX fragment; ValueError for a result without ideals."""
    body = getattr(res, "latex_lines", None)
    if body is None:
        raise ValueError(f"no LaTeX form for a {type(res).__name__}")
    return "\n".join(header(res, "%") + body()) + "\n"
