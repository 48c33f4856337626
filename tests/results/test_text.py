"""Results print as the CLI does: ``str(result)`` is the command's text (the two share one renderer), and
every HTML and Markdown view says how certain the result is (certified, exact, probabilistic with its
bound, numeric)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from lightning_cas import api
from lightning_cas.cli import main
from lightning_cas.core.architecture import Architecture
from lightning_cas.core.network import Attention, Network
from lightning_cas.core.symmetry import random_weights
from lightning_cas.results.dimension import DimensionResult
from lightning_cas.system.points import WeightPoint

LEGACY = Path(__file__).resolve().parent / "data" / "legacy"
_TIME = re.compile(r"\d+(?:\.\d+)?(?:e-?\d+)? s\b")


def cli(*args) -> str:
    runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
    out = runner.invoke(main, list(args))
    assert out.exit_code == 0, out.output
    return out.stdout


def untimed(text: str) -> str:
    return _TIME.sub("T s", text)


@pytest.fixture(scope="module")
def network_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("net") / "net.json"
    path.write_text(
        json.dumps(
            {
                "input": 2,
                "tokens": 2,
                "blocks": [
                    {"kind": "attention", "attention": 1, "value": 1, "causal": True, "residual": True},
                    {"kind": "mlp", "hidden": 2},
                ],
            }
        )
    )
    return str(path)


@pytest.mark.parametrize(
    "verb,args",
    [
        ("dim", ["--widths", "2,2", "--attention", "2"]),
        ("dim", ["--widths", "2,2", "--attention", "1", "--normalization", "softmax", "--method", "numeric"]),
        ("dim", ["--arch", "NET"]),
        ("verify", ["--arch", "NET"]),
        ("predict", ["--widths", "3,3,3", "--attention", "2,2"]),
        ("fiber", ["--widths", "2,1", "--attention", "1", "--method", "modp"]),
        ("fiber", ["--arch", "NET"]),
    ],
)
def test_str_of_the_json_result_is_the_cli_text(network_file, verb, args):
    """The command run twice, once for text, once for JSON: the JSON read back prints the same text
    (only the time taken differs between the two runs)."""
    args = [network_file if a == "NET" else a for a in args]
    quiet = [] if verb == "predict" else ["-q"]
    text = cli(verb, *args, *quiet)
    result = _from_json(cli(verb, *args, *quiet, "--json"))
    assert untimed(str(result) + "\n") == untimed(text)
    assert not str(result).startswith(type(result).__name__ + "(")  # not the dataclass repr


def _from_json(text: str):
    from lightning_cas.results import result_class, result_kinds

    kind = json.loads(text)["kind"]
    assert kind in result_kinds()
    return result_class(kind).from_json(text)


def _certified_softmax_rank():
    net = Network(2, 2, (Attention(1, causal=True, normalization="softmax"),))
    point = WeightPoint(net, tuple(map(Fraction, random_weights(net, 0))))
    return api.dimension(net, at=point)


def test_every_view_states_the_certainty():
    modp = api.dimension(Network(2, 2, (Attention(2),)))
    bound = f"{modp.failure_bound:.2g}"
    for view in (modp._repr_html_(), modp._repr_markdown_()):
        assert "probabilistic" in view and f"at most {bound}" in view
    numeric = api.dimension(Architecture((2, 2), (1,), 2, "softmax"), method="numeric")
    assert "numeric" in numeric._repr_markdown_() and "not certified" in numeric._repr_html_()
    theory = api.predict(Network(2, 2, (Attention(2),)))
    assert "certainty: **exact" in theory._repr_markdown_() and "<b>exact" in theory._repr_html_()
    verify = api.verify(Network(2, 2, (Attention(2),)))
    assert f"at most {bound}" in verify._repr_markdown_()  # the certainty of its computation


def test_the_html_of_a_softmax_rank_says_whether_it_is_certified():
    rank = _certified_softmax_rank()
    assert rank.certificate is not None and rank.certificate.certified
    assert "certified: rank = 7" in rank._repr_html_() and "certified: rank = 7" in rank._repr_markdown_()
    # the same record with bounds that do not meet (as a run that could not close the gap writes it)
    data = json.loads(rank.to_json())
    data["certificate"]["lower"] = 6
    open_gap = DimensionResult.from_dict(data)
    assert "NOT certified: 6 &lt;= rank &lt;= 7" in open_gap._repr_html_()
    assert "NOT certified" in open_gap._repr_markdown_() and "not certified: rank >= 6" in str(open_gap)


@pytest.mark.parametrize("name", sorted(p.name for p in LEGACY.glob("*.json")))
def test_geometry_results_print_their_text_and_certainty(name):
    res = api.load_result(LEGACY / name)
    text = str(res)
    assert not text.startswith(type(res).__name__ + "(") and "\n" in text or "singular:" in text
    if not name.startswith("point_singular"):  # singular --at prints the verdict only
        assert str(res.architecture) in text
    md = res._repr_markdown_()
    assert f"certainty: **{res.certainty}" in md and "```text\n" in md
    assert "certainty: <b>" in res._repr_html_()


def test_markdown_never_lets_a_file_write_markup():
    data = json.loads(api.load_result(LEGACY / "boundary_211_vertex.json").to_json())
    data["notes"] = ["```\n# heading <script>x</script>", "\x1b]0;title\x07"]
    res = type(api.load_result(LEGACY / "boundary_211_vertex.json")).from_dict(data)
    md = res._repr_markdown_()
    fence = md.rsplit("\n", 1)[1]
    assert len(fence) > 3 and md.count(fence) == 2  # the fence is longer than any run of backticks inside
    assert "\x1b" not in md and "\\x1b" in md


@pytest.fixture(scope="module")
def result_strategies():
    from tests.adversarial.test_contract import _all_result_classes, record_strategy

    return st.one_of([record_strategy(cls) for cls in _all_result_classes()])


@settings(max_examples=40, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data())
def test_every_result_has_a_markdown_view_with_its_certainty(result_strategies, data):
    """Even a record no command would write (drawn at random) shows itself, with its certainty."""
    res = data.draw(result_strategies)
    md = res._repr_markdown_()
    sure = getattr(getattr(res, "computed", None), "certainty", None) or getattr(res, "certainty", None)
    if sure is not None:
        assert f"certainty: **{sure}" in md or "certainty: **certified" in md
