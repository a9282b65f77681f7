"""Importers: benchmark data -> .tom scenario files (`tomc import ...`).

`hitom` turns the released Hi-ToM data (He et al., Findings of EMNLP 2023) into one scenario
per story, plus an index that joins each `ask` back to the benchmark's records.
"""
