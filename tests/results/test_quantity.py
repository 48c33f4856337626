"""A rank at given weights or on given inputs names its quantity: on inputs the batch functional dimension (a lower
bound of the rank at W), at W alone for a ReLU network the functional dimension over every input."""

from __future__ import annotations

import numpy as np

from lightning_cas import Activation, Linear, Network, dimension


def test_the_text_names_what_the_number_is():
    net = Network(3, 1, (Linear(6, bias=True), Activation("relu"), Linear(1, bias=True)))
    rng = np.random.default_rng(0)
    w, X = rng.standard_normal(net.parameters).tolist(), rng.standard_normal((5, 3, 1))
    few = dimension(net, at=w, inputs=X, seed=0)
    alone = dimension(net, at=w, seed=0)
    assert "batch functional dimension on these 5 inputs" in few.text()
    assert "functional dimension at the point" in alone.text()
    assert few.dimension <= alone.dimension  # five inputs see no more than every input
    generic = dimension(Network(2, 2, (Linear(2), Linear(1))))
    assert "quantity" not in generic.text()
