"""Kernel sets chosen by stated objectives: coverage objectives, coverage reports, coverage-optimal selection and
uniform sampling."""
