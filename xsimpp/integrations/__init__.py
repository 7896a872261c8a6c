"""Adapters that let other frameworks call xsimpp (one file each): ``sentence_transformers``
(an evaluator for ``SentenceTransformerTrainer``)."""
