"""`explain`: why a kernel is valid or not, with every broken rule, the derived quantities and the nearest valid
kernels (found by CP-SAT only for a rejected kernel)."""
