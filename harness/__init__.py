"""Retrieval evaluation harness: redundancy-aware and trec_eval metrics, stratified reports."""

__version__ = "0.1.0"
