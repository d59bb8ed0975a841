"""Pure functions over a loaded ``Trace``: lanes, links, regions, op table, copies."""
