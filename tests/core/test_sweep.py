"""Tests of smoothdp_nb.core.runtime.sweeps: sweeps and Monte Carlo on concurrent.futures executors."""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest

from smoothdp_nb.core.runtime import parallel
from smoothdp_nb.core.runtime.sweeps import SweepResult, monte_carlo_map, sweep

GRID = {"epsilon": [0.1, 0.5, 1.0, 2.0], "n": [10, 100, 1000], "kind": ["a", "b"]}
N_POINTS = 4 * 3 * 2


# ----------------------------------------------------------- top-level (picklable) functions


def noisy_stat(epsilon, n, kind, rng):
    """Grid function with real numpy work and random draws."""
    x = rng.laplace(scale=1.0 / epsilon, size=n)
    shift = 1.0 if kind == "a" else -1.0
    return {"mean": float(x.mean()) + shift, "max": float(x.max()), "first": float(x[0])}


def exact_stat(epsilon, n, kind):
    """Deterministic grid function returning a scalar."""
    return float(np.exp(-epsilon) * np.log1p(n)) * (2.0 if kind == "a" else 1.0)


def fails_on_n100(epsilon, n, kind):
    if n == 100:
        raise ValueError(f"bad n={n}")
    return epsilon * n


def interrupted_at_point(epsilon, n, kind):
    if (epsilon, n, kind) == (0.5, 10, "a"):  # grid index 6
        raise KeyboardInterrupt
    return epsilon * n


def slow_for_large_n(epsilon, n, kind):
    if n == 1000:
        time.sleep(2.0)
    return epsilon * n


class Summary:
    def __init__(self, epsilon, n):
        self.epsilon, self.n = epsilon, n

    def to_dict(self):
        return {"product": self.epsilon * self.n, "ratio": self.n / self.epsilon}


def summary_fn(epsilon, n, kind):
    return Summary(epsilon, n)


def returns_string(epsilon, n, kind):
    return "not a number"


def laplace_trials(size, rng, scale=1.0):
    """Monte Carlo trial function: real numpy work per chunk, one value per trial."""
    draws = rng.laplace(scale=scale, size=(size, 8))
    return np.abs(draws).max(axis=1) + rng.random(size)


def pair_trials(size, rng):
    """Two values per trial (2-D output)."""
    return rng.normal(size=(size, 2))


def wrong_length_trials(size, rng):
    return np.zeros(size + 1)


def exploding_trials(size, rng):
    raise RuntimeError("boom")


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def process_pool():
    with parallel.process_pool(2) as pool:  # never a fork of this (threaded) process
        yield pool


@pytest.fixture(scope="module")
def reference_sweep():
    return sweep(noisy_stat, GRID, rng=2026, progress=False)


# ----------------------------------------------------------------------------- sweep


def test_sweep_in_process_result(reference_sweep):
    res = reference_sweep
    assert isinstance(res, SweepResult)
    assert res.complete and not res.partial and res.errors == []
    assert res.n_points == res.n_done == N_POINTS
    df = res.to_frame()
    assert list(df.columns) == ["epsilon", "n", "kind", "mean", "max", "first"]
    assert len(df) == N_POINTS
    # cartesian product, last parameter fastest
    assert df[["epsilon", "n", "kind"]].iloc[:3].values.tolist() == [
        [0.1, 10, "a"],
        [0.1, 10, "b"],
        [0.1, 100, "a"],
    ]


def test_sweep_identical_across_executors(reference_sweep, process_pool):
    expected = reference_sweep.to_frame()
    with cf.ThreadPoolExecutor(max_workers=3) as threads:
        by_threads = sweep(noisy_stat, GRID, threads, rng=2026, progress=False)
    by_processes = sweep(noisy_stat, GRID, process_pool, rng=2026, progress=False)
    by_processes_chunk1 = sweep(noisy_stat, GRID, process_pool, rng=2026, chunksize=1, progress=False)
    by_processes_chunk7 = sweep(noisy_stat, GRID, process_pool, rng=2026, chunksize=7, progress=False)
    for res in [by_threads, by_processes, by_processes_chunk1, by_processes_chunk7]:
        assert res.complete
        pd.testing.assert_frame_equal(res.to_frame(), expected, check_exact=True)
    assert by_processes_chunk1.n_tasks == N_POINTS
    assert by_processes_chunk7.n_tasks == 4


def test_sweep_exact_function_bit_identical(process_pool):
    a = sweep(exact_stat, GRID, progress=False)
    b = sweep(exact_stat, GRID, process_pool, chunksize=5, progress=False)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame(), check_exact=True)
    assert list(a.to_frame().columns) == ["epsilon", "n", "kind", "value"]


def test_sweep_tasks_are_batched(process_pool):
    res = sweep(exact_stat, GRID, process_pool, progress=False)
    assert 1 < res.n_tasks < N_POINTS  # about four tasks per worker, not one per point
    res = sweep(
        exact_stat, {"epsilon": list(np.linspace(0.1, 1, 50)), "n": [1], "kind": ["a"]}, process_pool, progress=False
    )
    assert res.n_tasks == 8


def test_sweep_seeds_follow_seedsequence_spawn():
    res = sweep(noisy_stat, GRID, rng=11, progress=False)
    children = np.random.SeedSequence(11).spawn(N_POINTS)
    df = res.to_frame()
    for i in [0, 5, N_POINTS - 1]:
        row = df.iloc[i]
        direct = noisy_stat(row["epsilon"], int(row["n"]), row["kind"], np.random.default_rng(children[i]))
        assert direct["first"] == row["first"]
    # the same int seed reproduces; another seed differs
    again = sweep(noisy_stat, GRID, rng=11, chunksize=3, progress=False)
    pd.testing.assert_frame_equal(again.to_frame(), df, check_exact=True)
    other = sweep(noisy_stat, GRID, rng=12, progress=False).to_frame()
    assert not np.array_equal(other["first"], df["first"])
    # a SeedSequence equal to the int seed gives the same streams on first use
    from_ss = sweep(noisy_stat, GRID, rng=np.random.SeedSequence(11), progress=False)
    pd.testing.assert_frame_equal(from_ss.to_frame(), df, check_exact=True)
    # a Generator is spawned from, like Generator.spawn: fresh streams on the next call
    gen = np.random.default_rng(11)
    first = sweep(noisy_stat, GRID, rng=gen, progress=False).to_frame()
    second = sweep(noisy_stat, GRID, rng=gen, progress=False).to_frame()
    pd.testing.assert_frame_equal(first, df, check_exact=True)
    assert not np.array_equal(first["first"], second["first"])


def test_sweep_grid_forms():
    points = [{"epsilon": 0.5, "n": 10, "kind": "a"}, {"epsilon": 2.0, "n": 3, "kind": "b"}]
    from_list = sweep(exact_stat, points, progress=False).to_frame()
    from_frame = sweep(exact_stat, pd.DataFrame(points), progress=False).to_frame()
    assert from_list["value"].tolist() == [exact_stat(**p) for p in points]
    pd.testing.assert_frame_equal(from_list, from_frame, check_exact=True)
    by_object = sweep(summary_fn, points, progress=False).to_frame()
    assert list(by_object.columns) == ["epsilon", "n", "kind", "product", "ratio"]
    assert by_object["product"].tolist() == [5.0, 6.0]
    fixed = sweep(exact_stat, {"epsilon": [1.0], "n": [5, 6]}, fixed={"kind": "b"}, progress=False)
    assert fixed.to_frame()["value"].tolist() == [exact_stat(1.0, 5, "b"), exact_stat(1.0, 6, "b")]


@pytest.mark.parametrize("use_pool", [False, True])
def test_sweep_failures_reported_with_parameters(use_pool, process_pool):
    executor = process_pool if use_pool else None
    res = sweep(fails_on_n100, GRID, executor, chunksize=5, progress=False)
    assert not res.complete and not res.partial
    assert len(res.errors) == 8
    for params, message in res.errors:
        assert params["n"] == 100
        assert set(params) == {"epsilon", "n", "kind"}
        assert "ValueError" in message and "bad n=100" in message
    df = res.to_frame()
    assert len(df) == N_POINTS - 8 and (df["n"] != 100).all()
    assert np.array_equal(df["value"], df["epsilon"] * df["n"])
    full = res.to_frame(include_missing=True)
    assert len(full) == N_POINTS
    assert full.loc[full["n"] == 100, "value"].isna().all()


def test_sweep_bad_return_type_is_a_failure():
    res = sweep(returns_string, {"epsilon": [1.0], "n": [1], "kind": ["a"]}, progress=False)
    assert not res.complete
    ((params, message),) = res.errors
    assert params == {"epsilon": 1.0, "n": 1, "kind": "a"}
    assert "TypeError" in message and "to_dict" in message


def test_sweep_unpicklable_function_reported(process_pool):
    res = sweep(lambda epsilon, n, kind: epsilon, GRID, process_pool, chunksize=12, progress=False)
    assert res.n_done == 0 and not res.complete
    assert len(res.errors) == N_POINTS
    assert all("ickl" in message for _, message in res.errors)


@pytest.mark.parametrize("chunksize", [1, 4, 100])
def test_sweep_partial_on_keyboard_interrupt(chunksize):
    res = sweep(interrupted_at_point, GRID, chunksize=chunksize, progress=False)
    assert res.partial and not res.complete
    assert res.errors == []
    df = res.to_frame()
    assert len(df) == 6  # the points before the interrupted one (grid index 6)
    assert res.records[6] is None and all(r is not None for r in res.records[:6])
    assert np.array_equal(df["value"], df["epsilon"] * df["n"])


def test_sweep_partial_on_interrupt_in_thread_pool():
    with cf.ThreadPoolExecutor(max_workers=1) as threads:
        res = sweep(interrupted_at_point, GRID, threads, chunksize=2, progress=False)
    assert res.partial and not res.complete
    assert all(r is not None for r in res.records[:6])
    assert res.records[6] is None


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT to the test process (POSIX only)")
def test_sweep_partial_on_ctrl_c_while_waiting_for_workers():
    """A real SIGINT while the main thread waits on the executor keeps finished points."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not mapped to KeyboardInterrupt in this process")
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    with cf.ThreadPoolExecutor(max_workers=2) as threads:
        timer.start()
        try:
            # grid indices 4 and 5 (n=1000) sleep; 0..3 finish at once
            res = sweep(slow_for_large_n, GRID, threads, chunksize=1, progress=False)
        finally:
            timer.cancel()
    assert res.partial and not res.complete
    assert all(r is not None for r in res.records[:4])
    assert res.n_done == 4
    assert res.elapsed < 1.5  # without the interrupt it takes about 8 s


def test_sweep_progress_bar(capsys):
    res = sweep(exact_stat, GRID, chunksize=4, progress=True)
    assert res.complete
    assert "sweep" in capsys.readouterr().err


@pytest.mark.parametrize(
    "grid, match",
    [
        ({}, "grid"),
        ([], "grid"),
        (pd.DataFrame(), "grid"),
        ({"epsilon": []}, r"grid\['epsilon'\]"),
    ],
)
def test_sweep_empty_grid_rejected(grid, match):
    with pytest.raises(ValueError, match=match):
        sweep(exact_stat, grid)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"grid": {"epsilon": 1.0}}, r"grid\['epsilon'\]"),
        ({"grid": {"epsilon": "abc"}}, r"grid\['epsilon'\]"),
        ({"grid": [1, 2]}, r"grid\[0\]"),
        ({"grid": 5}, "grid"),
        ({"grid": {1: [1]}}, "grid"),
        ({"grid": GRID, "executor": "processes"}, "executor"),
        ({"grid": GRID, "rng": 1.5}, "rng"),
        ({"grid": GRID, "chunksize": "2"}, "chunksize"),
        ({"grid": GRID, "chunksize": True}, "chunksize"),
        ({"grid": GRID, "progress": "yes"}, "progress"),
    ],
)
def test_sweep_bad_types_rejected(kwargs, match):
    with pytest.raises(TypeError, match=match):
        sweep(exact_stat, **kwargs)


def test_sweep_other_bad_input():
    with pytest.raises(TypeError, match="fn"):
        sweep(42, GRID)
    with pytest.raises(ValueError, match="chunksize"):
        sweep(exact_stat, GRID, chunksize=0)
    with pytest.raises(ValueError, match="chunksize"):
        sweep(exact_stat, GRID, chunksize=2.5)  # integral floats are integers (one vocabulary), 2.5 is not
    with pytest.raises(ValueError, match="rng"):
        sweep(exact_stat, {"rng": [1]}, rng=1)
    with pytest.raises(ValueError, match="rng"):
        sweep(exact_stat, GRID, rng=-1)
    with pytest.raises(ValueError, match="fixed"):
        sweep(exact_stat, GRID, fixed={"n": 3})

    class FakeClient:
        def get_executor(self):
            return None

    with pytest.raises(TypeError, match="get_executor"):
        sweep(exact_stat, GRID, FakeClient())


def test_sweep_result_is_frozen(reference_sweep):
    with pytest.raises(dataclasses.FrozenInstanceError):
        reference_sweep.partial = True  # type: ignore[misc]


# ----------------------------------------------------------------------------- Monte Carlo


def test_monte_carlo_map_matches_manual_chunks():
    out = monte_carlo_map(laplace_trials, 1050, rng=3, chunk=200)
    assert out.shape == (1050,) and out.dtype == np.float64
    children = np.random.SeedSequence(3).spawn(6)
    manual = np.concatenate(
        [laplace_trials(min(200, 1050 - 200 * c), np.random.default_rng(children[c])) for c in range(6)]
    )
    np.testing.assert_array_equal(out, manual)


def test_monte_carlo_map_identical_across_executors_and_workers(process_pool):
    expected = monte_carlo_map(laplace_trials, 20_001, rng=99, chunk=1000, progress=False)
    results = []
    for workers in (1, 3):
        with cf.ThreadPoolExecutor(max_workers=workers) as threads:
            results.append(monte_carlo_map(laplace_trials, 20_001, 99, threads, chunk=1000))
    with parallel.process_pool(1) as single:
        results.append(monte_carlo_map(laplace_trials, 20_001, 99, single, chunk=1000))
    results.append(monte_carlo_map(laplace_trials, 20_001, 99, process_pool, chunk=1000))
    for out in results:
        np.testing.assert_array_equal(out, expected)
    # the chunk size (not the executor) defines the streams
    other_chunking = monte_carlo_map(laplace_trials, 20_001, rng=99, chunk=999)
    assert not np.array_equal(other_chunking, expected)


def test_monte_carlo_map_kwargs_and_2d(process_pool):
    scaled = monte_carlo_map(laplace_trials, 500, 5, process_pool, chunk=64, kwargs={"scale": 3.0})
    np.testing.assert_array_equal(scaled, monte_carlo_map(laplace_trials, 500, 5, chunk=64, kwargs={"scale": 3.0}))
    pairs = monte_carlo_map(pair_trials, 1001, rng=np.random.SeedSequence(8), chunk=100)
    assert pairs.shape == (1001, 2)
    # a Generator is spawned from: two calls give different draws
    gen = np.random.default_rng(8)
    assert not np.array_equal(monte_carlo_map(pair_trials, 10, gen), monte_carlo_map(pair_trials, 10, gen))


def test_monte_carlo_map_default_chunk_single_task():
    out = monte_carlo_map(laplace_trials, 1000, rng=1)
    np.testing.assert_array_equal(
        out, laplace_trials(1000, np.random.default_rng(np.random.SeedSequence(1).spawn(1)[0]))
    )


def test_monte_carlo_map_errors(process_pool):
    with pytest.raises(ValueError, match="first axis"):
        monte_carlo_map(wrong_length_trials, 10, rng=1, chunk=4)
    with pytest.raises(RuntimeError, match="boom") as info:
        monte_carlo_map(exploding_trials, 10, 1, process_pool, chunk=4)
    assert any("trials" in note for note in getattr(info.value, "__notes__", []))
    with pytest.raises(ValueError, match="trials"):
        monte_carlo_map(laplace_trials, 0, rng=1)
    with pytest.raises(TypeError, match="trials"):
        monte_carlo_map(laplace_trials, "10", rng=1)
    with pytest.raises(ValueError, match="trials"):
        monte_carlo_map(laplace_trials, 10.5, rng=1)
    with pytest.raises(ValueError, match="chunk"):
        monte_carlo_map(laplace_trials, 10, rng=1, chunk=0)
    with pytest.raises(TypeError, match="rng"):
        monte_carlo_map(laplace_trials, 10, rng="seed")
    with pytest.raises(TypeError, match="executor"):
        monte_carlo_map(laplace_trials, 10, 1, object())
    with pytest.raises(TypeError, match="trial_fn"):
        monte_carlo_map(None, 10, 1)


# ----------------------------------------------------------------------------- imports


def test_core_sweep_imports_no_dask_or_notebook_stack():
    code = (
        "import sys, smoothdp_nb.core.runtime.sweeps as s, numpy as np\n"
        "s.sweep(lambda a: a, {'a': [1, 2]}, progress=True)\n"
        "bad = [m for m in ('dask', 'distributed', 'IPython', 'ipywidgets', 'altair') if m in sys.modules]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------------------- dask


def test_sweep_and_monte_carlo_on_dask_local_cluster(reference_sweep):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        pytest.skip("dask.distributed is not installed (pip install 'smoothdp_nb[dask]')")
    import cloudpickle

    t0 = time.perf_counter()
    module = sys.modules[__name__]
    # the workers cannot import this test module, so ship its functions by value
    cloudpickle.register_pickle_by_value(module)
    try:
        with (
            LocalCluster(
                n_workers=2,
                processes=True,
                threads_per_worker=1,
                dashboard_address=None,
            ) as cluster,
            Client(cluster) as client,
        ):
            executor = client.get_executor()
            res = sweep(noisy_stat, GRID, executor, rng=2026, progress=False)
            failing = sweep(fails_on_n100, GRID, executor, chunksize=5, progress=False)
            mc = monte_carlo_map(laplace_trials, 20_001, 99, executor, chunk=1000)
    finally:
        cloudpickle.unregister_pickle_by_value(module)

    assert res.complete
    assert res.n_tasks <= N_POINTS
    pd.testing.assert_frame_equal(res.to_frame(), reference_sweep.to_frame(), check_exact=True)
    assert len(failing.errors) == 8 and all(p["n"] == 100 for p, _ in failing.errors)
    np.testing.assert_array_equal(mc, monte_carlo_map(laplace_trials, 20_001, 99, chunk=1000))
    assert time.perf_counter() - t0 < 60
