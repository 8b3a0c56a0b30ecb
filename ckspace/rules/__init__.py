"""The rule language and its data: expressions, the constraint files, kernel names, the model of one arch, and the
plain-Python check of one config (the tests' oracle). Nothing here imports the solver."""
