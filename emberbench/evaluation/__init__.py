"""The run path: a manifest played into a result artifact. The coordinator and its sinks,
the store-backed run and what it resumes from, run info, the output lock, record puts
and spool, the choice of executor, and the evaluation that writes nothing.
"""
