"""A long "training" that survives being stopped: resume from the checkpoint, save every step.

Why: no single job may run 5 days on Niagara (or Trillium): the limit is 24 hours. slurmkit
runs such a job as a chain of 24-hour links. Each link restores the checkpoint folder into
$SLURM_TMPDIR/ckpt, runs this program, saves the folder back every hour and at the end, and
the next link starts where this one stopped. The program's part of the contract:

- read $SLURM_TMPDIR/ckpt/state.json if it is there, and continue from its step;
- write the state after every step, atomically (a new file renamed over the old), so that a
  link stopped at any moment leaves the last complete step, never a half-written file;
- exit 0 only when the work is done: that ends the chain. Stopped before (SLURM's TERM near
  the time limit), it exits non-zero and the next link carries on.

The work is a stand-in: each step sleeps --seconds-per-step and moves a toy loss downhill.
"""

import argparse
import json
import os
import pathlib
import signal
import socket
import sys
import time


def parse_args():
    tmp = os.environ.get("SLURM_TMPDIR", ".")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total-steps", type=int, default=20)
    parser.add_argument("--seconds-per-step", type=float, default=0.1)
    parser.add_argument("--ckpt-dir", default=os.path.join(tmp, "ckpt"), help="the folder slurmkit saves and restores")
    return parser.parse_args()


def load(path, total_steps):
    """The saved state, or a fresh one."""
    if os.path.exists(path):
        with open(path) as handle:
            return json.load(handle)
    return {"step": 0, "total_steps": total_steps, "loss": 1.0, "starts": []}


def save(path, state):
    """Write-then-rename: readers (and the hourly copy-back) see the old file or the new, whole."""
    partial = path + ".partial"
    with open(partial, "w") as handle:
        json.dump(state, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)
    # Marked complete: slurmkit copies the checkpoint folder only while its marker is newer than
    # every file in it (a file written after it is a checkpoint being written).
    marker = os.environ.get("SLURMKIT_CHECKPOINT_COMPLETE")
    if marker:
        pathlib.Path(marker).touch()


def stop(signum, _frame):
    # The state on disk is the last finished step: nothing more to save.
    print(f"signal {signum}: stopping; the next link resumes from the last saved step", flush=True)
    sys.exit(128 + signum)


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, stop)
    os.makedirs(args.ckpt_dir, exist_ok=True)
    path = os.path.join(args.ckpt_dir, "state.json")
    state = load(path, args.total_steps)
    state["starts"].append({"step": state["step"], "host": socket.gethostname(), "job": os.environ.get("SLURM_JOB_ID", "-")})
    print(f"start {len(state['starts'])}: resuming at step {state['step']} of {args.total_steps}", flush=True)
    while state["step"] < args.total_steps:
        time.sleep(args.seconds_per_step)          # the real work of one step goes here
        state["loss"] *= 0.99
        state["step"] += 1
        save(path, state)
        if state["step"] % max(1, args.total_steps // 20) == 0:
            print(f"step {state['step']}/{args.total_steps} loss={state['loss']:.4f}", flush=True)
    save(path, state)
    print(f"done: {state['step']} steps over {len(state['starts'])} start(s), loss={state['loss']:.4f}", flush=True)


if __name__ == "__main__":
    main()
