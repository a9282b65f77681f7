"""Evaluations of tomc on public benchmarks; `python -m eval.hitom` runs the Hi-ToM one."""
