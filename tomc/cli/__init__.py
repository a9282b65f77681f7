"""The `tomc` command line: one module per verb, wired together in `main.py`."""
