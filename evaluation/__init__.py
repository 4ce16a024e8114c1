"""The benchmark's scoring side: run records, argument match, execution match, summaries, reports."""
