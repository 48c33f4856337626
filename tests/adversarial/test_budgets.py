"""Budgets before work: every reader and validator bounds its work by the input's size before it starts.

Each probe was a hang, a quadratic parse or a huge allocation: here it is a one-line refusal (exit 2)
within seconds, or the right answer. Sizes are chosen so that the old behaviour would take minutes
or gigabytes; the time asserts leave a wide margin for a loaded machine.
"""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from lightning_cas.batch.spec import parse_spec
from lightning_cas.batch.store import verify_record
from lightning_cas.cli import main
from lightning_cas.core.blocks import MAX_BLOCKS, MAX_NETWORK_DEGREE
from lightning_cas.core.network import Attention, Network
from lightning_cas.errors import InputError
from lightning_cas.results.documents import MAX_KEY_PARTS, parse_toml
from lightning_cas.system.arrays import npz_arrays
from lightning_cas.system.points import MAX_INPUT_ENTRIES, as_point, load_inputs, load_weights

FAST_S = 5.0
LEGACY = Path(__file__).parents[1] / "batch" / "data" / "legacy_v3"
RESIDUAL_12 = {"input": 2, "tokens": 2, "blocks": [{"kind": "attention", "attention": 1, "residual": True}] * 12}


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True)


def one_line_refusal(res, match: str, code: int = 2):
    assert res.exit_code == code, (res.exit_code, res.stdout[-500:], res.stderr[-500:], res.exception)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("lightning-cas: error:") and match in lines[0], res.stderr


def timed(fn):
    start = time.monotonic()
    out = fn()
    return out, time.monotonic() - start


# ---- degree sets by arithmetic ------------------------------------------------------------------


def test_twelve_residual_blocks_are_refused_at_once_by_their_degree():
    """The degrees triple per residual attention block: 3^12 > the cap, known without any degree set."""
    with pytest.raises(InputError, match=f"degree {3**9} in the tokens after block 9.*{MAX_NETWORK_DEGREE}"):
        timed(lambda: Network.from_dict(RESIDUAL_12))
    _, took = timed(lambda: pytest.raises(InputError, Network.from_dict, RESIDUAL_12))
    assert took < 1.0


def test_eight_residual_blocks_have_every_degree_up_to_the_cap():
    """3^8 at the cap is accepted, and its degree set is every odd degree up to 3^8 (products of odd
    degrees are odd; the residual keeps every lower one): 3281 of them, computed in well under a second."""
    net, took = timed(lambda: Network(2, 2, tuple(Attention(1, residual=True) for _ in range(8))))
    degrees, took2 = timed(lambda: net.token_degrees)
    assert net.degree == MAX_NETWORK_DEGREE and degrees == frozenset(range(1, 3**8 + 1, 2))
    assert took + took2 < 2.0


@pytest.mark.parametrize("where", ["arch", "spec", "record"])
def test_the_deep_network_is_refused_through_every_door(tmp_path, where):
    """Through --arch, a sweep spec and a record in a results directory (a forged 1.6 KB record hung report)."""
    start = time.monotonic()
    if where == "arch":
        path = tmp_path / "deep.json"
        path.write_text(json.dumps(RESIDUAL_12))
        one_line_refusal(invoke("dim", "--arch", path), "degree")
    elif where == "spec":
        toml = "name = 'deep'\n[[network]]\ninput = 2\n"
        toml += "".join("[[network.block]]\nkind = 'attention'\nattention = 1\nresidual = true\n" for _ in range(12))
        with pytest.raises(InputError, match="degree"):
            parse_spec(toml, "deep.toml")
    else:
        record = json.loads((LEGACY / "w2-2_a1_t2_none_modp_s0.json").read_text())
        record["job"]["architecture"] = RESIDUAL_12
        path = tmp_path / "results" / f"{record['label']}.json"
        path.parent.mkdir()
        path.write_text(json.dumps(record))
        assert len(path.read_bytes()) < 4096
        check = verify_record(path)
        assert check.status == "invalid"
        res = invoke("report", path.parent, "--json")
        assert res.exit_code in (0, 1, 2) and "internal error" not in res.stderr
    assert time.monotonic() - start < FAST_S


def test_the_transformer_shorthand_checks_its_cap_before_building():
    with pytest.raises(InputError, match=f"above the supported maximum of {MAX_BLOCKS}"):
        start = time.monotonic()
        Network.transformer(4, 1, 2, 10**12, d_mlp=4)
    assert time.monotonic() - start < 1.0
    one_line_refusal(invoke("predict", "--d-model", 4, "--n-heads", 1, "--d-head", 2, "--n-layers", 10**12), "blocks")


# ---- documents: size, depth and key length before parsing --------------------------------------


def test_a_toml_key_of_many_dotted_parts_is_refused_before_parsing():
    """tomllib's work on one dotted key grows with the square of its parts: 400 KB took minutes."""
    for text in ("a" + ".a" * 200_000 + " = 1\n", "[" + "a." * 200_000 + "a]\n"):
        _, took = timed(lambda: pytest.raises(InputError, parse_toml, text))
        assert took < 1.0
    with pytest.raises(InputError, match=f"more than {MAX_KEY_PARTS} dotted parts"):
        parse_toml("x" + ".y" * MAX_KEY_PARTS + " = 1\n")


def test_values_with_dots_and_quoted_dotted_keys_are_not_counted():
    doc = parse_toml('"a.b.c.d" = "1.2.3.4.5"\nx = [\n' + "0.5, " * 200 + "\n]\nq.w = 1.5\n")
    assert doc["a.b.c.d"] == "1.2.3.4.5" and len(doc["x"]) == 200 and doc["q"]["w"] == 1.5


# ---- arrays: from the zip directory and the headers before decompressing -----------------------


def _bomb(name: str = "weights", entries: int = 2**24) -> bytes:
    """An .npz whose one member is 128 MiB of zeros compressed to about 128 KB."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open(f"{name}.npy", "w", force_zip64=True) as fp:
            np.lib.format.write_array_header_1_0(fp, {"descr": "<f8", "fortran_order": False, "shape": (entries,)})
            chunk = bytes(2**24)
            for _ in range(entries * 8 // len(chunk)):
                fp.write(chunk)
    return buf.getvalue()


@pytest.fixture(scope="module")
def bomb():
    return _bomb()


def test_an_npz_bomb_is_refused_from_its_directory(tmp_path, bomb):
    assert len(bomb) < 4 * 2**20
    path = tmp_path / "bomb.npz"
    path.write_bytes(bomb)
    net = Network(2, 2, (Attention(1),))
    _, took = timed(lambda: pytest.raises(InputError, load_weights, net, path))
    assert took < FAST_S
    with pytest.raises(InputError, match=f"{2**24} entries, the network 8"):
        load_weights(net, path)
    with pytest.raises(InputError, match="bytes uncompressed, above the supported maximum"):
        npz_arrays(bomb, "bomb.npz", max_bytes=2**26)


def test_npz_names_are_checked_before_any_member_is_read(bomb):
    renamed = bomb.replace(b"weights.npy", b"planted.npy")
    with pytest.raises(InputError, match="'planted' is not expected"):
        npz_arrays(renamed, "x.npz", {"weights": 8})


def test_a_flat_array_of_the_wrong_length_is_refused_before_conversion():
    net = Network(2, 2, (Attention(1),))
    big = np.zeros(8_000_000)
    _, took = timed(lambda: pytest.raises(InputError, as_point, net, big))
    assert took < 1.0
    from lightning_cas.system.points import point_from_arrays

    _, took = timed(lambda: pytest.raises(InputError, point_from_arrays, net, {"weights": big}))
    assert took < 1.0


def test_too_many_inputs_are_refused_before_conversion(tmp_path):
    net = Network(2, 2, (Attention(1),))
    path = tmp_path / "inputs.npy"
    np.save(path, np.zeros((MAX_INPUT_ENTRIES // 4 + 1, 2, 2)))
    _, took = timed(lambda: pytest.raises(InputError, load_inputs, net, path))
    assert took < FAST_S


# ---- memory of predict; the whole-command time limit ------------------------------------------


def test_predict_refuses_an_orbit_rank_that_does_not_fit():
    """131072 weights: the orbit rank's echelon form alone is about 100 GiB (26 GiB were asked before)."""
    res, took = timed(
        lambda: invoke("predict", "--d-model", 64, "--n-heads", 4, "--d-head", 16, "--n-layers", 4, "--d-mlp", 128)
    )
    one_line_refusal(res, "GiB")
    assert took < FAST_S


def test_predict_of_a_small_network_still_answers():
    """One causal residual attention block on width 2 (a = b = 1): 2 + 2 + 1 + 2 = 7 weights; the named
    group (GL(1) twice and a scaling) leaves at most 7 - 2 = 5... the orbit rank mod p gives the bound."""
    res = invoke("predict", "--d-model", 2, "--n-heads", 1, "--d-head", 1, "--n-layers", 1, "--json")
    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["kind"] == "TheoryReport" and report["dimension"]["value"] <= 7


def test_the_timeout_covers_reading_the_inputs(tmp_path):
    """A JSON inputs file that takes seconds to convert and whose last entry is not a number: a limit that
    starts only after the reading would let it end in that refusal (exit 2); the command's limit stops it."""
    rows = [[[f"{k % 7 + 1}/3", "3/5"], ["5/7", f"{k % 3 + 1}/11"]] for k in range(60_000)]
    rows[-1][-1][-1] = "not a number"
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps(rows))
    res, took = timed(
        lambda: invoke("dim", "--widths", "2,2", "--attention", 1, "--inputs", path, "--timeout", 0.05)
    )  # far below the conversion, on a quiet machine too
    one_line_refusal(res, "time limit", code=1)  # a time limit is exit 1, as for every verb
    assert took < FAST_S
