"""``python -m entityworks`` runs the command line, under the console script's Ctrl-C guard."""

from entityworks_launch import main

if __name__ == "__main__":
    main()
