"""I/O rules: canonical JSON and digests, the input policy every reader follows, the output
policy and the atomic writer every writer uses, and the version of every format.

The lowest layer of the core: it imports nothing of EMBERBench but its errors.
"""
