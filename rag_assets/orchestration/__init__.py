"""Dagster wiring: partitions, jobs, sensors, schedules, plans, runs, executors, checks;
and what the `trecho` commands carry out (materialize and backfill, status, evaluate)."""
