"""``python -m hieropt``: the command line, the same as the ``hieropt`` console script
(:func:`hieropt.cli.main`)."""

from .cli import main

if __name__ == "__main__":
    main()
