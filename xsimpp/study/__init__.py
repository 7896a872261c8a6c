"""Which proxy predicts mining? The proxy-validation study of `xsimpp study`: a grid of encoders
x languages, the proxies per cell, mining F1 on gold hidden among real distractors as ground
truth, and the ranking statistics of `xsimpp rank` between them.

config (TOML, presets) -> data (gold, negatives, distractor pool) -> encoders (cached, shared
forward passes) -> run (proxies, mining, analysis) -> output (atomic folder, HTML report)."""
