"""The `memento` command line (SPEC §7): ``main.py`` wires argparse, ``output.py``
prints, ``commands/<name>.py`` holds one subcommand each."""
