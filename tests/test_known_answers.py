"""Known answers for everything keyed (issue 16, item 3): a change of algorithm must update the fixture.

``tests/fixtures/known_answers.json`` pins, for fixed inputs, the keyed permutation π_t (explicit
key, several rounds, model §4), a client's batch order over several local epochs (fl.training),
the fading draw (model §5), one logical block of noise (phy.blocks), one keyed stream
(phy.randomness) and the keyed sequence sets (model §3). Regenerate with ``python tests/fixtures/make_known_answers.py`` only when the
change is intended, and say so in the commit. The permutation is pinned for an explicit key, not
for a key derived from a seed (that derivation is a separate, replaceable choice).
"""

import hashlib
import hmac
import json
from pathlib import Path

import numpy as np
import pytest

from fl.training import batch_indices
from phy.assignment import DOMAIN_TAG, round_permutation, round_seed
from phy.blocks import block_noise
from phy.fading import draw_rayleigh
from phy.randomness import stream
from phy.sequences import pseudo_noise, random_orthonormal

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "known_answers.json").read_text(encoding="utf-8"))


def test_fixture_regenerates_from_its_own_script():
    """The script and the file agree (an edit to one without the other fails here)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_known_answers", Path(__file__).parent / "fixtures" / "make_known_answers.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.KEY_HEX == FIXTURE["permutation"]["key_hex"]
    assert [int(t) for t in FIXTURE["permutation"]["rounds"]] == list(mod.PERMUTATION_ROUNDS)


@pytest.mark.parametrize("t", list(FIXTURE["permutation"]["rounds"]))
def test_keyed_permutation_known_answer(t):
    """π_t for an explicit 256-bit key: HMAC-SHA256(key, tag ‖ t) (checked independently), then Philox."""
    fx = FIXTURE["permutation"]
    key = bytes.fromhex(fx["key_hex"])
    seed = hmac.new(key, DOMAIN_TAG + int(t).to_bytes(8, "big"), hashlib.sha256).digest()
    assert round_seed(key, int(t)).hex() == seed.hex() == fx["rounds"][t]["round_seed_hex"]
    np.testing.assert_array_equal(round_permutation(key, int(t), N=fx["N"]), fx["rounds"][t]["permutation"])


def test_permutation_uses_both_halves_of_the_seed_in_their_roles():
    """The first 128 bits key Philox, the last 128 bits are its counter (module docstring): swapping them,
    or dropping either half, gives another permutation than the pinned one."""
    fx = FIXTURE["permutation"]
    key = bytes.fromhex(fx["key_hex"])
    seed = round_seed(key, 0)
    pinned = fx["rounds"]["0"]["permutation"]
    lo, hi = int.from_bytes(seed[:16], "little"), int.from_bytes(seed[16:], "little")
    for k, c in ((lo, hi), (hi, lo), (lo, 0), (hi, 0)):
        perm = np.random.Generator(np.random.Philox(key=k, counter=c)).permutation(fx["N"]).tolist()
        assert (perm == pinned) == ((k, c) == (lo, hi))


def test_batch_order_known_answer():
    fx = FIXTURE["batch_order"]
    got = batch_indices(seed=fx["seed"], round_index=fx["round_index"], clients=np.array(fx["clients"]), D=fx["D"],
                        batch_size=fx["batch_size"], steps=fx["steps"], epochs=fx["epochs"])
    np.testing.assert_array_equal(got, fx["indices"])


def test_every_local_epoch_draws_a_fresh_permutation():
    """E = 3 epochs of D = 26 records in batches of 5: each epoch is a permutation of 25 distinct records,
    and no two epochs of a client repeat the same order (a reused permutation has probability 1/26! per pair)."""
    fx = FIXTURE["batch_order"]
    idx = batch_indices(seed=fx["seed"], round_index=fx["round_index"], clients=np.array(fx["clients"]), D=fx["D"],
                        batch_size=fx["batch_size"], steps=fx["steps"], epochs=fx["epochs"])  # [S, K, B]
    per_epoch = fx["D"] // fx["batch_size"]
    for k in range(idx.shape[1]):
        epochs = [idx[e * per_epoch:(e + 1) * per_epoch, k].ravel() for e in range(fx["epochs"])]
        for ep in epochs:
            assert np.unique(ep).size == per_epoch * fx["batch_size"]
        for a in range(len(epochs)):
            for b in range(a + 1, len(epochs)):
                assert not np.array_equal(epochs[a], epochs[b])
    # and rounds differ too
    other = batch_indices(seed=fx["seed"], round_index=fx["round_index"] + 1, clients=np.array(fx["clients"]), D=fx["D"],
                          batch_size=fx["batch_size"], steps=fx["steps"], epochs=fx["epochs"])
    assert not np.array_equal(other, idx)


def test_fading_draw_known_answer():
    fx = FIXTURE["fading"]
    for t in fx["rounds"]:
        h = draw_rayleigh(fx["seed"], t, K=fx["K"])
        expected = np.array([complex(re, im) for re, im in fx["h"][str(t)]])
        np.testing.assert_allclose(h, expected, rtol=1e-12, atol=0)


def test_block_noise_known_answer():
    fx = FIXTURE["block_noise"]
    z = block_noise(tuple(fx["rows"]), fx["n"], seed=fx["seed"], purpose=fx["purpose"], round_index=fx["round_index"],
                    block=fx["block"], std=fx["std"])
    np.testing.assert_allclose(z, fx["values"], rtol=1e-15, atol=0)


def test_keyed_stream_known_answer():
    fx = FIXTURE["stream"]
    z = stream(fx["seed"], fx["purpose"], *fx["indices"]).standard_normal(fx["n"])
    np.testing.assert_allclose(z, fx["standard_normal"], rtol=1e-15, atol=0)


def test_keyed_sequence_sets_known_answer():
    """The keyed random-orthonormal set (QR with the signs fixed by diag(R)) and the pn set (model §3)."""
    fx = FIXTURE["sequences"]
    kw = dict(L=fx["L"], N=fx["N"], seed=fx["seed"])
    np.testing.assert_allclose(random_orthonormal(**kw), fx["random_orthonormal"], rtol=0, atol=1e-13)
    np.testing.assert_array_equal(pseudo_noise(**kw), fx["pn"])
