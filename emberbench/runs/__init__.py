"""The runs a store holds: the catalog (list, show, export), verifying a run from the
store, repairing lost records and results, and the audit of every stored result.
"""
