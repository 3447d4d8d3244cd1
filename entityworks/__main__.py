"""``python -m entityworks`` runs the command line."""

from ._entry import main

if __name__ == "__main__":
    main()
