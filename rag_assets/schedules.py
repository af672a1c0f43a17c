"""Schedules: the eval report is rewritten every morning from the live index."""

import os

from dagster import DefaultScheduleStatus, ScheduleDefinition

from rag_assets.jobs import eval_job

eval_schedule = ScheduleDefinition(
    name="daily_eval_report",
    job=eval_job,
    cron_schedule=os.environ.get("TRECHO_EVAL_CRON", "0 6 * * *"),
    default_status=DefaultScheduleStatus.STOPPED,
    description="Re-run the eval on the live index (cron from TRECHO_EVAL_CRON).",
)
