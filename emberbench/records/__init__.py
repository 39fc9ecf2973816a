"""One episode: playing it, its run record, replaying a record to authenticate it, and the
metrics computed on the way.
"""
