"""Reading results: statistics, tables, plots, layout maps (Python, one job per module)."""
