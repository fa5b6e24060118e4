"""Pool functions for tests/test_sweep.py: one kills its worker process on one run id,
one answers with its worker's process id. They live in a module of their own so that the
spawned worker processes import only this."""

import os
import time


def exit_on_boom(task):
    if task["run_id"] == "boom":
        os._exit(3)
    time.sleep(0.05)
    return {"run_id": task["run_id"], "files": {}}


def worker_pid(task):
    time.sleep(0.2)
    return {"run_id": task["run_id"], "pid": os.getpid()}
