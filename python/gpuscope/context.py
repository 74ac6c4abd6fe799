"""Who this process is in its job (host, SLURM ids, ranks), for the results it reports."""
import os
import socket


def job_context(environ=None):
    """Who this process is in its job, from the launchers' and SLURM's variables: host, job and
    step ids, array job and task, rank, local rank and world size (None where not set)."""
    env = environ if environ is not None else os.environ

    def first(*names):
        for name in names:
            value = env.get(name)
            if value not in (None, ""):
                return int(value) if value.lstrip("-").isdigit() else value
        return None

    return {
        "host": env.get("SLURMD_NODENAME") or socket.gethostname(),
        "job_id": first("SLURM_JOB_ID"),
        "step_id": first("SLURM_STEP_ID"),
        "array_job_id": first("SLURM_ARRAY_JOB_ID"),
        "array_task_id": first("SLURM_ARRAY_TASK_ID"),
        "rank": first("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"),
        "local_rank": first("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                            "SLURM_LOCALID"),
        "world_size": first("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"),
    }
