"""The SePer arithmetic against hand-computed numbers: normalised likelihoods, the soft kernel
with several references, greedy clustering by bidirectional entailment, the hard kernel."""

from __future__ import annotations

import math

import pytest

from harness.utility.seper import cluster, hard_seper, sequence_weights, soft_seper


def test_weights_length_normalised_and_not():
    # means -1 and -2: exp(-1) / (exp(-1) + exp(-2)) = 1 / (1 + e^-1) = 0.7310585786300049
    w = sequence_weights([[-1.0, -1.0], [-2.0]], length_normalize=True)
    assert w == pytest.approx([0.7310585786300049, 0.2689414213699951], abs=1e-15)
    # sums -2 and -2: equal
    assert sequence_weights([[-1.0, -1.0], [-2.0]], length_normalize=False) == [0.5, 0.5]
    # no underflow: sums of -2000 and -2001 -> 1 / (1 + e^-1) again
    w = sequence_weights([[-1000.0, -1000.0], [-2001.0]], length_normalize=False)
    assert w == pytest.approx([0.7310585786300049, 0.2689414213699951], abs=1e-15)


def test_weights_empty_sample_has_likelihood_one():
    # [] -> exp(0) = 1; [-ln 3] -> 1/3: weights 1 / (4/3) and (1/3) / (4/3)
    w = sequence_weights([[], [-math.log(3.0)]], length_normalize=True)
    assert w == pytest.approx([0.75, 0.25], abs=1e-15)
    assert sequence_weights([], True) == []


def test_soft_averages_references():
    weights = [0.5, 0.3, 0.2]
    # ref 1: 0.5*0.9 + 0.3*0.2 + 0.2*0.7 = 0.45 + 0.06 + 0.14 = 0.65
    # ref 2: 0.5*0.1 + 0.3*0.8 + 0.2*0.5 = 0.05 + 0.24 + 0.10 = 0.39
    got = soft_seper(weights, [[0.9, 0.2, 0.7], [0.1, 0.8, 0.5]])
    assert got == pytest.approx((0.65 + 0.39) / 2, abs=1e-15)
    assert math.isnan(soft_seper(weights, []))


TEXTS = ["Paris", "Paris, France", "Lyon", "Paris", "Marseille"]
E = {  # E(i ⊢ j) for the pairs the greedy pass may ask
    (1, 0): 0.9, (0, 1): 0.6,  # Paris, France ≡ Paris
    (2, 0): 0.1, (0, 2): 0.1,  # Lyon: a new class
    (4, 0): 0.6, (0, 4): 0.4,  # Marseille ⊢ Paris but not back: not equivalent
    (4, 2): 0.7, (2, 4): 0.5,  # Marseille ≡ Lyon (0.5 >= tau 0.5)
}  # fmt: skip


def test_cluster_greedy_against_first_members():
    asked = []

    def entail(i, j):
        asked.append((i, j))
        return E[(i, j)]

    assert cluster(TEXTS, entail, 0.5) == [0, 0, 1, 0, 1]
    # sample 3 is the text of sample 0: joined without asking the NLI model
    assert all(3 not in pair for pair in asked)
    # only first members (0 and 2) are ever compared with
    assert {j for i, j in asked if i > j} <= {0, 2}
    # at tau 0.6 Marseille no longer joins Lyon (E(Lyon ⊢ Marseille) = 0.5)
    assert cluster(TEXTS, lambda i, j: E[(i, j)], 0.6) == [0, 0, 1, 0, 2]


def test_hard_sums_classes_equivalent_to_each_reference():
    weights = [0.4, 0.1, 0.2, 0.2, 0.1]
    labels = [0, 0, 1, 0, 1]
    # a class is equivalent to a reference when every member is (the paper's C_{a*})
    # ref "Paris": class 0 = samples 0, 1, 3 all entail it both ways: 0.4 + 0.1 + 0.2 = 0.7
    # ref "Lyon": class 1 = samples 2, 4: both >= 0.5 both ways: 0.2 + 0.1 = 0.3
    to_ref = [[0.95, 0.8, 0.1, 0.95, 0.1], [0.1, 0.1, 0.9, 0.1, 0.6]]
    from_ref = [[0.95, 0.7, 0.1, 0.95, 0.2], [0.1, 0.1, 0.5, 0.1, 0.55]]
    assert hard_seper(weights, labels, to_ref, from_ref, 0.5) == pytest.approx(0.5, abs=1e-15)
    # tau 0.6: "Lyon" matches nothing (0.5 < 0.6): (0.7 + 0) / 2
    assert hard_seper(weights, labels, to_ref, from_ref, 0.6) == pytest.approx(0.35, abs=1e-15)
    assert math.isnan(hard_seper(weights, labels, [], [], 0.5))


def test_hard_needs_every_member_of_a_class_equivalent():
    """Samples "Paris, France" and "Paris" cluster together; against the reference "France"
    the first member is equivalent, the second is not: the class is not equivalent (its
    first member alone would give 1.0)."""
    weights, labels = [0.5, 0.5], [0, 0]
    to_ref, from_ref = [[0.9, 0.1]], [[0.9, 0.2]]
    assert hard_seper(weights, labels, to_ref, from_ref, 0.5) == 0.0
    assert hard_seper(weights, labels, [[0.9, 0.6]], [[0.9, 0.7]], 0.5) == 1.0
