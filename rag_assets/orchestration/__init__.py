"""Dagster wiring: partitions, jobs, sensors, schedules, plans, runs, executors, checks."""
