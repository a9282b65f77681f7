"""`python -m tomc` runs the CLI."""

from tomc.cli.main import main

main()
