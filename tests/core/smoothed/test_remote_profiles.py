"""The exact smoothed delta runs its profile chunks on an executor -- a thread pool, a process
pool, a Dask cluster on loopback -- bit-identical to the serial run; a worker killed mid-run
either costs nothing but time (Dask reruns its tasks) or stops the run with an error naming the
lost chunk (a broken process pool), never a result with rows missing."""

from __future__ import annotations

import concurrent.futures as cf
import math
import multiprocessing
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import smoothdp_nb as sdp
from smoothdp_nb.core.runtime.executors import as_executor, worker_count
from smoothdp_nb.core.runtime.parallel import process_pool
from smoothdp_nb.core.smoothed.engines import exact
from smoothdp_nb.core.smoothed.engines.remote import ProfileChunkError, remote_profile_table

PI = [[0.3, 0.7], [0.6, 0.4]]
EPS = [0.5, 1.0, 2.0]
#: seconds each law of the slow mechanism takes: long enough to kill a worker while chunks run
SLOW_LAW = 0.02


def _binomial(h: int, p: float) -> np.ndarray:
    k = np.arange(h + 1, dtype=float)
    log_choose = np.array([math.lgamma(h + 1) - math.lgamma(i + 1) - math.lgamma(h - i + 1) for i in k])
    return np.exp(log_choose + k * math.log(p) + (h - k) * math.log1p(-p))


def randomized_response(hist):
    """Each record reports its bit, kept with probability 3/4; the count of zeros is published."""
    h0, h1 = hist
    return dict(enumerate(np.convolve(_binomial(h0, 0.75), _binomial(h1, 0.25))))


def on_executor() -> bool:
    """True in a pool's worker thread or a worker process (the engine's own probes run in the main thread)."""
    return threading.current_thread() is not threading.main_thread() or multiprocessing.parent_process() is not None


def slow_randomized_response(hist):
    if on_executor():
        time.sleep(SLOW_LAW)
    return randomized_response(hist)


def fails_at_seventy(hist):
    if hist[0] == 70 and on_executor():
        raise ValueError("this law is not defined at 70")
    return randomized_response(hist)


RR = sdp.FiniteMechanism(randomized_response, categories=2, name="rr")
SLOW = sdp.FiniteMechanism(slow_randomized_response, categories=2, name="slow rr")


@pytest.fixture
def small_chunks(monkeypatch):
    """Many chunks at small n (the engine's chunk size is thousands of histograms)."""
    monkeypatch.setattr(exact, "profile_chunk_rows", lambda n_epsilon: 23)


def _same(a: sdp.SmoothedResult, b: sdp.SmoothedResult) -> bool:
    """Bit-identical bounds, worst compositions and tables."""
    return (
        np.array_equal(a.log_delta_values, b.log_delta_values)
        and np.array_equal(a.log_delta_lower_values, b.log_delta_lower_values)
        and np.array_equal(a.worst_composition_values, b.worst_composition_values)
        and a.table.equals(b.table)
    )


@pytest.mark.usefixtures("small_chunks")
def test_thread_and_process_pools_give_the_serial_result_bit_for_bit():
    serial = sdp.smoothed_delta(RR, 120, PI, EPS, progress=False)
    with cf.ThreadPoolExecutor(2) as threads:
        assert _same(serial, sdp.smoothed_delta(RR, 120, PI, EPS, progress=False, executor=threads))
    with process_pool(2) as processes:
        assert _same(serial, sdp.smoothed_delta(RR, 120, PI, EPS, progress=False, executor=processes))


@pytest.mark.usefixtures("small_chunks")
def test_the_sampling_average_with_three_values_on_a_pool():
    avg = sdp.SamplingAverage(eta=0.5, grid=[-1.0, 0.0, 1.0])
    pi = [[0.2, 0.3, 0.5], [0.5, 0.3, 0.2]]
    serial = sdp.smoothed_delta(avg, 24, pi, [0.5, 1.0], progress=False)
    with cf.ThreadPoolExecutor(2) as threads:
        assert _same(serial, sdp.smoothed_delta(avg, 24, pi, [0.5, 1.0], progress=False, executor=threads))


def test_the_chunks_are_the_serial_chunks_in_order():
    hists = np.stack([np.arange(50), 49 - np.arange(50)], axis=1)
    e = np.array([0.5, 1.0])
    want = exact._profile_chunk(RR, hists, e)
    with cf.ThreadPoolExecutor(3) as threads:
        got = remote_profile_table(threads, exact._profile_chunk, RR, hists, e, rows=7)
    np.testing.assert_array_equal(
        got, np.concatenate([exact._profile_chunk(RR, hists[i : i + 7], e) for i in range(0, 50, 7)])
    )
    assert got.shape == want.shape


@pytest.mark.usefixtures("small_chunks")
def test_a_failing_chunk_stops_the_run_and_names_the_chunk():
    mech = sdp.FiniteMechanism(fails_at_seventy, categories=2)
    with (
        cf.ThreadPoolExecutor(2) as threads,
        pytest.raises(ProfileChunkError, match=r"profile chunk \d+ of \d+") as info,
    ):
        sdp.smoothed_delta(mech, 200, PI, EPS, progress=False, executor=threads, budget=math.inf)
    assert isinstance(info.value.__cause__, ValueError)
    assert "failed on the executor (ValueError" in str(info.value)


@pytest.mark.usefixtures("small_chunks")
def test_a_killed_process_pool_worker_fails_the_run_with_a_clear_error():
    pool = process_pool(2)
    killed = threading.Event()

    def kill_one() -> None:
        deadline = time.monotonic() + 60
        while not pool._processes and time.monotonic() < deadline:  # the pool starts its workers on first submit
            time.sleep(0.01)
        time.sleep(0.3)
        os.kill(next(iter(pool._processes)), signal.SIGKILL)  # a worker of the pool, busy with a chunk
        killed.set()

    try:
        killer = threading.Thread(target=kill_one)
        killer.start()
        with pytest.raises(ProfileChunkError, match="BrokenProcessPool") as info:
            sdp.smoothed_delta(SLOW, 400, PI, EPS, progress=False, executor=pool, budget=math.inf)
        killer.join()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    assert killed.is_set()
    assert "no smoothed delta is computed from the other chunks" in str(info.value)


@pytest.mark.usefixtures("small_chunks")
def test_a_dask_client_on_loopback_survives_a_killed_worker():
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    import cloudpickle

    serial = sdp.smoothed_delta(SLOW, 400, PI, EPS, progress=False, budget=math.inf)
    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)  # the workers cannot import this test module
    try:
        with (
            distributed.LocalCluster(
                n_workers=2,
                processes=True,
                threads_per_worker=1,
                host="127.0.0.1",
                dashboard_address=None,
            ) as cluster,
            distributed.Client(cluster) as client,
        ):
            assert isinstance(as_executor(client), cf.Executor)  # the client itself is accepted
            assert worker_count(as_executor(client)) == 2  # the cluster's threads: the chunks in flight
            assert _same(
                serial, sdp.smoothed_delta(SLOW, 400, PI, EPS, progress=False, executor=client, budget=math.inf)
            )

            pids = client.run(os.getpid)
            state: dict[str, float] = {}

            def kill_one() -> None:
                deadline = time.monotonic() + 60
                busy: list[str] = []
                while not busy and time.monotonic() < deadline:  # a worker that holds chunks
                    busy = [w for w, tasks in client.processing().items() if tasks]
                    time.sleep(0.01)
                time.sleep(0.2)
                os.kill(pids[busy[0]], signal.SIGKILL)
                state["killed"] = time.perf_counter()

            killer = threading.Thread(target=kill_one)
            killer.start()
            again = sdp.smoothed_delta(SLOW, 400, PI, EPS, progress=False, executor=client, budget=math.inf)
            state["done"] = time.perf_counter()
            killer.join()
            assert _same(serial, again)
            assert state["killed"] < state["done"]  # the worker died while the run went on
            client.wait_for_workers(2, timeout=60)
            assert set(client.run(os.getpid).values()) != set(pids.values())  # the nanny replaced it
    finally:
        cloudpickle.unregister_pickle_by_value(module)
