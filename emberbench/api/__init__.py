"""The front door of the Python API: calls that combine stages for a notebook or a script, and that the
command line uses too (evaluate with a choice of executor, the report, the viewer and the plots, exports
and the run catalog as tables). The only part of the core beside the CLI that may reach the Ray runner,
inside functions that run on Ray.
"""
