"""Optimizers, optim wrappers and their builders.

Kept free of imports: ``runnerx.optim.optimizers`` (which imports torch) is loaded by the
OPTIMIZERS registry the first time it is looked up.
"""
