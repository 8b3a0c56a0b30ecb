from ._entry import run  # first: it handles stop signals from here on

run()
