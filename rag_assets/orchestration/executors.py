"""Which executor runs a run's steps, chosen by configuration (TRECHO_EXECUTOR).

`in_process` (the default) and `multiprocess` come with Dagster; `dask`, `celery` and `k8s`
come from optional extras and are imported only when chosen, so a missing extra fails the
code location's load with the `pip install` line that fixes it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from typing import Any

from dagster import (
    DagsterEvent,
    ExecutorDefinition,
    Field,
    in_process_executor,
    multiprocess_executor,
    raise_execution_interrupts,
)

from rag_assets.core.errors import UserError
from rag_assets.settings import Settings

EXECUTORS: dict[str, tuple[str, str, str | None]] = {
    "multiprocess": ("dagster", "multiprocess_executor", None),
    "in_process": ("dagster", "in_process_executor", None),
    "dask": ("rag_assets.orchestration.executors", "dask_executor", "dask"),
    "celery": ("dagster_celery", "celery_executor", "celery"),
    "k8s": ("dagster_k8s", "k8s_job_executor", "k8s"),
}
"""Executor name -> (module, executor attribute, trecho extra that installs it); the
names are `rag_assets.settings.EXECUTORS`."""


class ExecutorConfigError(UserError, RuntimeError):
    """The configured executor is unknown, or its optional extra is not installed. Raised
    while the code location loads, so `dagster dev` / the code server show it at once."""


def executor_env_defaults(
    settings: Settings, name: str, max_concurrent: int | None = None
) -> dict[str, Any]:
    """Executor config defaults the settings give (run config can still override each):

    - multiprocess: TRECHO_MAX_CONCURRENT -> max_concurrent (steps at once per run)
    - dask: TRECHO_DASK_ADDRESS -> cluster.existing.address (a running scheduler), else a
      local cluster per run of TRECHO_DASK_WORKERS workers (dask's own default when unset)
    - celery: TRECHO_CELERY_BROKER / TRECHO_CELERY_BACKEND -> broker / backend, kept as
      `{env: ...}` references so the URL (and its password) never shows in the UI
    - k8s: TRECHO_K8S_NAMESPACE -> job_namespace, TRECHO_K8S_IMAGE -> job_image,
      TRECHO_MAX_CONCURRENT -> max_concurrent (step pods at once per run)
    """
    limit = max_concurrent or settings.max_concurrent
    config: dict[str, Any] = {}
    if name == "multiprocess" and limit:
        config["max_concurrent"] = limit
    elif name == "dask":
        local = {"n_workers": settings.dask_workers} if settings.dask_workers else {}
        address = settings.dask_address
        config["cluster"] = {"existing": {"address": address}} if address else {"local": local}
    elif name == "celery":
        for key in ("broker", "backend"):
            if getattr(settings, f"celery_{key}"):
                config[key] = {"env": settings.var(f"celery_{key}")}
    elif name == "k8s":
        for key, attr in (("job_namespace", "k8s_namespace"), ("job_image", "k8s_image")):
            if getattr(settings, attr):
                config[key] = getattr(settings, attr)
        if limit:
            config["max_concurrent"] = limit
    return config


def _with_defaults(executor: ExecutorDefinition, defaults: dict[str, Any]) -> ExecutorDefinition:
    """`executor` with some top-level config fields given defaults: unlike `.configured(x)`,
    which freezes the config, run config (`execution: {config: ...}`) may still set them."""
    if not defaults:
        return executor
    fields = dict(executor.config_schema.as_field().config_type.fields)
    for key, value in defaults.items():
        old = fields[key]
        fields[key] = Field(
            old.config_type, default_value=value, is_required=False, description=old.description
        )
    return executor.configured(lambda config: config, config_schema=fields)


def select_executor(
    settings: Settings, name: str | None = None, max_concurrent: int | None = None
) -> ExecutorDefinition:
    """The executor named by `name`, else TRECHO_EXECUTOR (`in_process` by default: a
    version's chain of steps in its run's one process), with the settings' defaults."""
    choice = (name or settings.executor).strip().lower().replace("-", "_")
    if choice not in EXECUTORS:
        raise ExecutorConfigError(
            f"executor {choice!r} is not one trecho knows; use one of: {', '.join(EXECUTORS)}"
        )
    module, attribute, extra = EXECUTORS[choice]
    if extra is None:
        executor = multiprocess_executor if choice == "multiprocess" else in_process_executor
    else:
        try:
            executor = getattr(importlib.import_module(module), attribute)
            if not isinstance(executor, ExecutorDefinition):
                executor = executor()
        except ImportError as exc:
            raise ExecutorConfigError(
                f"TRECHO_EXECUTOR={choice} needs the optional extra {extra!r}, which is not "
                f"installed: pip install 'trecho[{extra}]' ({exc})"
            ) from exc
    return _with_defaults(executor, executor_env_defaults(settings, choice, max_concurrent))


# -- dask ---------------------------------------------------------------------------------


class _StepArgs:
    """A step's arguments, sent to a Dask worker as one opaque object. Dask >= 2024.12 walks
    every tuple given to `Client.submit`, and a partitioned run (every trecho index run)
    holds a Dagster record that refuses iteration; an object that is not a tuple is sent
    as it is."""

    def __init__(self, *args: Any) -> None:
        self.args = args

    @property
    def step_key(self) -> str:
        """The step these arguments run (query_on_dask_worker's `step_keys`, one key)."""
        return str(self.args[3][0])


class _NotRun:
    """What a step's task returns when it did not run (`step`: its key): an upstream step
    of the same run failed or did not run either (`upstream`: their keys)."""

    def __init__(self, step: str, upstream: list[str]) -> None:
        self.step = step
        self.upstream = upstream


def _succeeded(result: Any) -> bool:
    """Whether an upstream task's result (its step's events) holds the step's success."""
    if isinstance(result, _NotRun):
        return False
    return any(getattr(event, "is_step_success", False) for event in result)


def _upstream_key(result: Any) -> str:
    """The step key an upstream task's result is about."""
    if isinstance(result, _NotRun):
        return result.step
    keys = {event.step_key for event in result if getattr(event, "step_key", None)}
    return ", ".join(sorted(keys)) or "an upstream step"


def _run_step_on_worker(dependencies: Sequence[Any], step: _StepArgs) -> Any:
    """Runs on the Dask worker: the step, as dagster-dask runs it, unless a step it depends
    on did not succeed. dagster-dask runs it anyway (a failed step's task still completes,
    with its failure among its events), and a stage would then record a materialization
    made from the output of an earlier run: stale work shown as fresh."""
    from dagster_dask.executor import query_on_dask_worker

    failed = [_upstream_key(result) for result in dependencies if not _succeeded(result)]
    if failed:
        return _NotRun(step.step_key, failed)
    return query_on_dask_worker(dependencies, *step.args)


_CLUSTERS = {
    "local": ("dask.distributed", "LocalCluster"),
    "ssh": ("dask.distributed", "SSHCluster"),
    "yarn": ("dask_yarn", "YarnCluster"),
    "pbs": ("dask_jobqueue", "PBSCluster"),
    "moab": ("dask_jobqueue", "MoabCluster"),
    "sge": ("dask_jobqueue", "SGECluster"),
    "lsf": ("dask_jobqueue", "LSFCluster"),
    "slurm": ("dask_jobqueue", "SLURMCluster"),
    "oar": ("dask_jobqueue", "OARCluster"),
    "kube": ("dask_kubernetes", "KubeCluster"),
}


def dask_executor() -> ExecutorDefinition:
    """dagster-dask's `dask` executor (same config: `cluster: {existing | local | ...}`), with
    three fixes: step arguments reach the workers whole (see `_StepArgs`); task keys
    carry the run id, so two runs of one job on a shared cluster (two document versions at
    once) are two sets of tasks, not one result handed to both (dagster issue #21418); and
    a step whose upstream step did not succeed in the run is skipped, not run on an
    earlier run's files (see `_run_step_on_worker`)."""
    import dask.distributed
    from dagster import multiple_process_executor_requirements
    from dagster_dask.executor import DaskExecutor, get_dask_resource_requirements
    from dagster_dask.executor import dask_executor as upstream

    class TrechoDaskExecutor(DaskExecutor):
        """Submits each step as one Dask task, its upstream steps' tasks as dependencies."""

        def execute(self, plan_context: Any, execution_plan: Any) -> Iterator[Any]:
            if not plan_context.instance.is_persistent:
                raise ExecutorConfigError("the dask executor needs a persistent Dagster instance")
            job_name = plan_context.job_name
            if self.cluster_type == "existing":
                cluster: Any = self.cluster_configuration["address"]
            else:  # a cluster for this run only, closed with it
                module, name = _CLUSTERS[self.cluster_type]
                cluster_class = getattr(importlib.import_module(module), name)
                cluster = cluster_class(**self.build_dict(job_name))
            try:
                yield from self._run_steps(cluster, plan_context, execution_plan)
            finally:
                if not isinstance(cluster, str):
                    cluster.close()

        def _run_steps(self, cluster: Any, plan_context: Any, execution_plan: Any) -> Iterator[Any]:
            job_name, run = plan_context.job_name, plan_context.dagster_run
            with dask.distributed.Client(cluster) as client:
                futures: dict[str, Any] = {}
                steps: dict[str, Any] = {}  # task key -> its step
                for level in execution_plan.get_steps_to_execute_by_level():
                    for step in level:
                        dependencies = [
                            futures[key] for put in step.step_inputs for key in put.dependency_keys
                        ]
                        args = _StepArgs(
                            plan_context.reconstructable_job,
                            run,
                            plan_context.run_config,
                            [step.key],
                            plan_context.instance.get_ref(),
                            execution_plan.known_state,
                        )
                        futures[step.key] = client.submit(
                            _run_step_on_worker,
                            dependencies,
                            args,
                            key=f"{job_name}.{step.key}.{run.run_id}",
                            resources=get_dask_resource_requirements(step.tags),
                        )
                        steps[futures[step.key].key] = step
                done = dask.distributed.as_completed(list(futures.values()), with_results=True)
                for future, events in _interruptible(done):
                    if isinstance(events, _NotRun):  # reported as the other executors do
                        step_context = plan_context.for_step(steps[future.key])
                        step_context.log.info(
                            f"Skipping step {step_context.step.key}: its upstream "
                            f"{', '.join(events.upstream)} did not succeed in this run."
                        )
                        yield DagsterEvent.step_skipped_event(step_context)
                    else:
                        yield from events

    def create(init_context: Any) -> TrechoDaskExecutor:
        ((cluster_type, cluster_configuration),) = init_context.executor_config["cluster"].items()
        return TrechoDaskExecutor(cluster_type, cluster_configuration)

    return ExecutorDefinition(
        name="dask",
        config_schema=upstream.config_schema,
        executor_creation_fn=create,
        requirements=multiple_process_executor_requirements(),
        description=upstream.description,
    )


def _interruptible(results: Iterator[Any]) -> Iterator[Any]:
    """`results` with Dagster's interrupts (a run terminated) raised while waiting for the
    next one, and only then: a slow or hanging step can be stopped, the code that handles
    a result is not cut short."""
    while True:
        with raise_execution_interrupts():
            try:
                result = next(results)
            except StopIteration:
                return
        yield result
