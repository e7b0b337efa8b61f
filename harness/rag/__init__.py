"""End-to-end RAG evaluation (docs/rag.md): a generator answers each query closed-book and with
the top K; a judge marks the answers; e2e@K, closed_book, rag_gain@K and parametric_gain@K per
query, and RARE's coverage types (metrics.rag)."""
