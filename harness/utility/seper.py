"""The arithmetic of SePer (Dai et al., ICLR 2025, section 3.4 and Algorithm 1), free of models:
normalised sequence likelihoods, semantic clustering by bidirectional entailment, and the soft
and hard estimates of the generator's belief in the reference answers."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def sequence_weights(logprobs: Sequence[Sequence[float]], length_normalize: bool) -> list[float]:
    """The normalised likelihoods l_i of N samples (they sum to 1). A sample's likelihood is
    exp(sum of its token log-probs), or with `length_normalize` exp(mean): the geometric mean
    token probability, so that long answers are not crushed. A sample of no tokens has
    likelihood 1 (the empty product). Computed in log space: no underflow."""
    if not logprobs:
        return []
    scores = []
    for lps in logprobs:
        total = math.fsum(lps)
        scores.append(total / len(lps) if length_normalize and lps else total)
    top = max(scores)
    if top == -math.inf:  # every sample impossible: no evidence either way, weigh alike
        return [1.0 / len(scores)] * len(scores)
    exps = [math.exp(s - top) for s in scores]
    norm = math.fsum(exps)
    return [e / norm for e in exps]


def soft_seper(weights: Sequence[float], entail: Sequence[Sequence[float]]) -> float:
    """Soft SePer: the mean over references r of sum_i l_i * E(sample_i, r);
    `entail[r][i]` = E(sample_i ⊢ reference r)."""
    if not entail:
        return math.nan
    return math.fsum(math.fsum(w * e for w, e in zip(weights, row)) for row in entail) / len(entail)


def cluster(texts: Sequence[str], entail: Callable[[int, int], float], tau: float) -> list[int]:
    """Greedy semantic clustering (Kuhn et al., 2023): sample i joins the first class whose
    first member it entails and is entailed by (both >= tau), else opens a new class.
    Identical texts are equivalent without asking the NLI model (entailment is reflexive).
    `entail(i, j)` = E(text_i ⊢ text_j). Returns each sample's class (numbered from 0 in
    order of appearance)."""
    labels: list[int] = []
    firsts: list[int] = []  # each class's first member
    for i, text in enumerate(texts):
        for c, f in enumerate(firsts):
            if texts[f] == text or (entail(i, f) >= tau and entail(f, i) >= tau):
                labels.append(c)
                break
        else:
            labels.append(len(firsts))
            firsts.append(i)
    return labels


def hard_seper(
    weights: Sequence[float],
    labels: Sequence[int],
    to_ref: Sequence[Sequence[float]],
    from_ref: Sequence[Sequence[float]],
    tau: float,
) -> float:
    """Hard SePer: the mean over references r of the summed l_i of the samples whose class is
    equivalent to r, a class being equivalent when every member and r entail each other
    (>= tau): the paper's C_{a*}, "for all r in C_{a*}, r ≡ a*". `to_ref[r][i]` =
    E(sample_i ⊢ r), `from_ref[r][i]` = E(r ⊢ sample_i)."""
    if not to_ref:
        return math.nan
    total = []
    for to_r, from_r in zip(to_ref, from_ref):
        equiv = set(labels)
        for i, c in enumerate(labels):
            if to_r[i] < tau or from_r[i] < tau:
                equiv.discard(c)  # one member that is not equivalent: the class is not
        total.append(math.fsum(w for w, c in zip(weights, labels) if c in equiv))
    return math.fsum(total) / len(total)
