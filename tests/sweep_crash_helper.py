"""A pool function for tests/test_sweep.py that kills its worker process on one run id.
It lives in a module of its own so that the spawned worker processes import only this."""

import os
import time


def exit_on_boom(task):
    if task["run_id"] == "boom":
        os._exit(3)
    time.sleep(0.05)
    return {"run_id": task["run_id"], "files": {}}
