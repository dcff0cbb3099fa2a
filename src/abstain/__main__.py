"""``python -m abstain ...``: the ``abstain`` command, e.g. under a launcher (``torchrun -m abstain train ...``)."""

from abstain.cli import main

if __name__ == "__main__":
    main()
