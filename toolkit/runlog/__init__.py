"""The run log: every command run leaves structured events, shipped to a log stream and
queried with SQL.

    events.py    the event fields, `.toolkit/events.jsonl` and its rotation, the writer
    run.py       `recorded(config, command)`: one run's events, start to end, then shipping
    shipping.py  exactly-once shipping to the log service through a cursor
    local.py     `toolkit logs --local`: the same SQL over the local files (DataFusion)
    times.py     the time range of a query (`--since`, `--start`, `--end`)

Importing this package costs nothing; DataFusion and pyarrow are imported by `local.py`
only, when a local query runs.
"""
