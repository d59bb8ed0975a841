"""SQL over traces: the model's columns as Arrow tables, queried by DuckDB (``[sql]`` extra).

``tables`` turns one analysed trace into Arrow tables (``events`` straight from the
numpy columns, without a copy; ``kernels``, ``ops``, ``regions`` from the same
analysis the headless commands print), ``engine`` registers them with DuckDB as
views that span every trace given (each row says its ``trace``), and ``export``
writes the same views as Parquet files that ``engine`` (or any engine) reads back.

Nothing here imports Textual, Rich or torch; ``duckdb`` and ``pyarrow`` are
imported inside the functions that need them, so the base install imports this
package and only a query asks for the extra (``MissingExtra`` says how to get it).
"""
