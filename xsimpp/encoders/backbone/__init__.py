"""What the Hugging Face adapters (``hf``, ``onealigner``, ``e5-small``, ``sbert``) and ``xsimpp.training``
share: a model folder (``models``), a checkpoint's training manifest (``manifest``), tokens and
batches (``batching``), layer views and pooling (``layers``), and the numeric backends ``path=``
chooses (``backend``: the interface and its registry; ``torch_backend``, ``openvino_graph``).
Named ``backbone`` rather than ``transformers`` so no import of the library can resolve to it."""
