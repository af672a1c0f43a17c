"""Dagster wiring: partitions, jobs, sensors, schedules, plans, runs, executors, checks;
and what `trecho materialize` and `backfill` carry out through Dagster (`materialize`)."""
