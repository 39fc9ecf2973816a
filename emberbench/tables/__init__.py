"""Tables out: a typed table value that notebooks, terminals, pandas and Arrow can show, and its file writers
(CSV, JSON lines, Parquet). It knows nothing of episodes: the stages that hold the data (results,
statistics, the run catalog) make its rows.
"""
