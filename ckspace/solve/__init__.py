"""Solving the model with CP-SAT: folding rules per stratum, the join tree of small bag models, counting by message
passing or variable elimination, and walking the join (eagerly, or lazily in the open space)."""
