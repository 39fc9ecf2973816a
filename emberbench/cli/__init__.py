"""The ``emberbench`` command line: thin commands over library calls."""
