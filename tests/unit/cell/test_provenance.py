"""What a cell records about the software that made it: the libraries its numbers can depend
on, the model stack only when it ran a model."""

from harness.cell.result import _model_packages
from harness.core import provenance


def test_every_cell_records_numba_and_a_model_cell_the_model_stack():
    assert "numba" in provenance.versions()
    assert _model_packages({"retriever": {"type": "bm25"}}) == ()
    for config in (
        {"retriever": {"type": "dense"}},
        {"retriever": {"type": "hybrid"}},
        {"retriever": {"_target_": "pkg.Mine"}},
        {"retriever": {"type": "python"}},
        {"retriever": {"type": "bm25"}, "utility": {"samples": 2}},
    ):
        names = _model_packages(config)
        assert {"torch", "transformers", "sentence-transformers", "faiss-cpu"} <= set(names)
    versions = provenance.versions(provenance.MODEL_PACKAGES)
    assert set(provenance.MODEL_PACKAGES) <= set(versions)  # None where not installed
