"""``python -m quire`` runs the CLI."""

from quire.cli import main

main()
