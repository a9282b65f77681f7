"""Engines: one object that holds a scenario's beliefs and answers about them, on FalkorDB
(tomc/engine/falkordb.py, the product) or in the reference interpreter
(tomc/engine/reference.py). Everything above (the runner, live sessions, memories, the CLI)
works through the `Engine` protocol of tomc/engine/base.py."""
