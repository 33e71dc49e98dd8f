"""CPU actually available, BLAS threads inside the engines only, and no fork of a threaded process."""

from __future__ import annotations

import concurrent.futures as cf
import os
import sys
import threading
import time
import warnings
from contextlib import contextmanager

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import smoothdp_nb as sdp
from smoothdp_nb.core.runtime import parallel as P


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


# -- available CPUs ----------------------------------------------------------------------------
def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_quota_of_the_cgroup_and_its_ancestors(tmp_path):
    _write(tmp_path / "cpu.max", "max 100000\n")  # the root: no quota
    _write(tmp_path / "hub" / "user" / "cpu.max", "150000 100000\n")
    assert P.cgroup_cpu_limit(tmp_path, "0::/hub/user\n") == 1.5
    _write(tmp_path / "hub" / "cpu.max", "50000 100000\n")  # a stricter parent applies too
    assert P.cgroup_cpu_limit(tmp_path, "0::/hub/user\n") == 0.5
    _write(tmp_path / "hub" / "cpu.max", "max 100000\n")
    _write(tmp_path / "hub" / "user" / "cpu.max", "max 100000\n")
    assert P.cgroup_cpu_limit(tmp_path, "0::/hub/user\n") is None
    # a container: its own cgroup is the mount's root (the path of /proc/self/cgroup is not mounted)
    _write(tmp_path / "cpu.max", "200000 100000\n")
    assert P.cgroup_cpu_limit(tmp_path, "0::/not/mounted/here\n") == 2.0


def test_cgroup_v1_cfs_quota(tmp_path):
    cg = "12:memory:/x\n4:cpu,cpuacct:/docker/abc\n"
    mount = tmp_path / "cpu,cpuacct"
    _write(mount / "docker" / "abc" / "cpu.cfs_quota_us", "250000\n")
    _write(mount / "docker" / "abc" / "cpu.cfs_period_us", "100000\n")
    assert P.cgroup_cpu_limit(tmp_path, cg) == 2.5
    _write(mount / "docker" / "abc" / "cpu.cfs_quota_us", "-1\n")  # no quota
    assert P.cgroup_cpu_limit(tmp_path, cg) is None
    assert P.cgroup_cpu_limit(tmp_path / "nothing", cg) is None


def test_available_cpus_takes_the_smallest_limit(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5}, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("SMOOTHDP_CPUS", raising=False)
    monkeypatch.setattr(P, "cgroup_cpu_limit", lambda: None)
    assert P.available_cpus() == 6
    monkeypatch.setattr(P, "cgroup_cpu_limit", lambda: 1.5)  # 1.5 CPUs: two workers use it all
    assert P.available_cpus() == 2
    monkeypatch.setattr(P, "cgroup_cpu_limit", lambda: 0.25)
    assert P.available_cpus() == 1
    monkeypatch.setattr(P, "cgroup_cpu_limit", lambda: 16.0)
    assert P.available_cpus() == 6  # the affinity mask
    monkeypatch.setenv("SMOOTHDP_CPUS", "3")
    assert P.available_cpus() == 3
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv("SMOOTHDP_CPUS", bad)
        with pytest.raises(ValueError, match="SMOOTHDP_CPUS must be a positive integer"):
            P.available_cpus()


def test_available_cpus_on_this_machine_is_within_the_affinity_mask():
    n = P.available_cpus()
    assert 1 <= n <= len(os.sched_getaffinity(0))


# -- BLAS threads ------------------------------------------------------------------------------
def test_engine_threads_limits_inside_and_restores_the_callers_setting():
    if not _blas_threads():
        pytest.skip("no BLAS library found by threadpoolctl")
    with threadpool_limits(3, user_api="blas"):  # the user's own choice
        assert set(_blas_threads()) == {3}
        with P.engine_threads():
            assert set(_blas_threads()) == {1}
            with P.engine_threads():  # nested: unchanged, and still limited after the inner exit
                assert set(_blas_threads()) == {1}
            assert set(_blas_threads()) == {1}
        assert set(_blas_threads()) == {3}
        with pytest.raises(ValueError, match="blas must be an integer >= 1"):
            with P.engine_threads(0):
                pass
        assert set(_blas_threads()) == {3}


class _FakeBlas:
    """Stands for threadpoolctl's controller: one process-wide BLAS thread count."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.sets: list[int] = []

    def limit(self, limits: int, user_api: str):
        fake, before = self, self.threads

        class Limiter:
            def restore_original_limits(self) -> None:
                fake.threads = before
                fake.sets.append(before)

        self.threads = limits
        self.sets.append(limits)
        return Limiter()


def test_engine_threads_overlapping_in_two_threads_restores_the_callers_setting(monkeypatch):
    """A enters, B enters, A leaves, B leaves: B still runs limited after A left, and
    the caller's setting is back at the end (a per-call save/restore would leave 1,
    the value B saved).  A fake controller: OpenBLAS 0.3.30 ignores a thread count set
    from a secondary thread once the main thread has set one (see the module docstring)."""
    fake = _FakeBlas(3)
    monkeypatch.setattr(P, "_blas_controller", lambda: fake)
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, int] = {}

    def a():
        with P.engine_threads():
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def b():
        a_in.wait(10)
        with P.engine_threads():
            b_in.set()
            a_out.wait(10)
            seen["b after a left"] = fake.threads

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(20)
    assert seen["b after a left"] == 1
    assert fake.threads == 3 and fake.sets == [1, 3]


class _Spy:
    """Records the BLAS threads and the thread name seen by each call of a wrapped function."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []
        self.lock = threading.Lock()

    def __call__(self, *args, **kwargs):
        with self.lock:
            self.calls.append((threading.current_thread().name, tuple(_blas_threads())))
        return self.fn(*args, **kwargs)


def test_exact_engine_runs_with_one_blas_thread_and_leaves_the_users_alone(monkeypatch):
    if not _blas_threads():
        pytest.skip("no BLAS library found by threadpoolctl")
    from smoothdp_nb.core.smoothed.engines import exact as X

    spy = _Spy(X.exact_binary)
    monkeypatch.setattr(X, "exact_binary", spy)
    with threadpool_limits(3, user_api="blas"):
        sdp.smoothed_delta(sdp.SamplingHistogram(eta=0.9), 400, [[0.3, 0.7], [0.6, 0.4]], 1.0, progress=False)
        assert set(_blas_threads()) == {3}
        sdp.privacy_profile(sdp.SamplingHistogram(eta=0.9), [[3, 7]], 1.0)
        assert set(_blas_threads()) == {3}
    assert spy.calls and all(set(b) == {1} for _, b in spy.calls)


# -- no fork of a threaded process -----------------------------------------------------------
@contextmanager
def _no_fork(monkeypatch):
    """os.fork raises, and every warning (also one raised as an unraisable exception) is recorded."""

    def forbidden():
        raise AssertionError("os.fork called")

    monkeypatch.setattr(os, "fork", forbidden)
    unraisable: list[str] = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value}")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught, unraisable
    finally:
        sys.unraisablehook = old_hook


def _assert_no_fork_warning(caught, unraisable):
    texts = [str(w.message) for w in caught] + unraisable
    bad = [t for t in texts if "fork" in t.lower()]
    assert not bad, bad


@contextmanager
def _a_running_thread():
    """The process is multi-threaded (as a Jupyter kernel always is) while the block runs."""
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        yield
    finally:
        stop.set()
        t.join()


def test_helper_path_in_a_threaded_process_does_not_fork_and_changes_nothing(monkeypatch):
    """The two-category path above HELPER_MIN_N (lowered here) shares half of the
    profile chunks and half of the epsilon columns with its helper: in a process
    that already has threads it must not fork (os.fork raises here, and the
    CPython 3.12+ warning "This process is multi-threaded, use of fork() may lead
    to deadlocks" would be recorded), and the result is bit-identical to the
    serial path (no helper)."""
    from smoothdp_nb.core.smoothed.engines import chunks, exact as X

    monkeypatch.setattr(X, "HELPER_MIN_N", 600)
    monkeypatch.setattr(chunks, "PROFILE_CHUNK", 512 * 5)  # two chunks of rows
    monkeypatch.setattr(P, "available_cpus", lambda: 2)  # a second CPU, whatever this machine has
    prof, eng = _Spy(X._profile_chunk), _Spy(X.exact_binary)
    monkeypatch.setattr(X, "_profile_chunk", prof)
    monkeypatch.setattr(X, "exact_binary", eng)

    class Unmirrored(sdp.SamplingHistogram):  # every histogram profiled: two chunks
        label_symmetric = False

    m, pi, eps = Unmirrored(eta=0.9), [[0.3, 0.7], [0.6, 0.4]], [0.3, 1.0, 2.0, 4.0, 9.0]
    with _a_running_thread(), _no_fork(monkeypatch) as (caught, unraisable):
        shared = sdp.smoothed_delta(m, 800, pi, eps, progress=False)
    _assert_no_fork_warning(caught, unraisable)
    helper_calls = sorted(
        kind for kind, spy in (("profile", prof), ("engine", eng)) for name, _ in spy.calls if "helper" in name
    )
    assert "engine" in helper_calls  # one half of the columns ran there
    assert len(prof.calls) == 2  # the two chunks, each once (either thread may take either: a shared queue)
    monkeypatch.setattr(X, "_helper", lambda n: None)
    prof.calls.clear()
    eng.calls.clear()
    serial = sdp.smoothed_delta(m, 800, pi, eps, progress=False)
    assert len(prof.calls) == 2 and len(eng.calls) == 2
    assert all("helper" not in name for name, _ in prof.calls + eng.calls)
    assert np.array_equal(shared.table["log_delta"], serial.table["log_delta"])
    assert np.array_equal(shared.log_delta, serial.log_delta)


def test_process_pool_never_uses_fork_and_gives_the_serial_results(monkeypatch):
    ex = P.process_pool(1)
    try:
        assert ex._mp_context.get_start_method() in ("forkserver", "spawn")
        mech, hists, eps = sdp.SamplingHistogram(eta=0.9), np.array([[3, 7], [40, 60]]), [0.5, 1.0]
        with _a_running_thread(), _no_fork(monkeypatch) as (caught, unraisable):
            got = ex.submit(sdp.privacy_profile, mech, hists, eps).result(timeout=120)
            blas = ex.submit(_blas_threads).result(timeout=60)
        _assert_no_fork_warning(caught, unraisable)
    finally:
        ex.shutdown()
    assert np.array_equal(got, sdp.privacy_profile(mech, hists, eps))
    assert set(blas) <= {P.available_cpus()}  # one worker: all the available CPUs for its BLAS, no more


def test_process_pool_rejects_bad_worker_counts():
    with pytest.raises(ValueError, match="workers must be an integer >= 1"):
        P.process_pool(0)
    with pytest.raises(TypeError, match="workers must be an integer >= 1"):
        P.process_pool(1.5)  # type: ignore[arg-type]


def _slow_in_caller(fn, pause):
    """fn, slowed by ``pause`` seconds when called outside the helper thread (a descheduled caller)."""

    def wrapped(*args, **kwargs):
        if "helper" not in threading.current_thread().name:
            time.sleep(pause)
        return fn(*args, **kwargs)

    return wrapped


def test_profile_chunks_go_to_whichever_thread_is_free(monkeypatch):
    """The profile table's chunks come from one shared queue: when the calling
    thread is slowed (here by a sleep, on a shared CPU by the scheduler), the
    helper takes more than half of the chunks, and the table is bit-identical
    to the serial one. (With a fixed half each, the helper would do exactly half.)"""
    from smoothdp_nb.core.smoothed.engines import chunks, exact as X

    mech, eps = sdp.SamplingHistogram(eta=0.9), np.array([0.5, 2.0])
    hists = np.stack([np.arange(801), 800 - np.arange(801)], axis=1)
    monkeypatch.setattr(chunks, "PROFILE_CHUNK", 512 * 2)  # chunks of 512 rows (profile_chunk_rows' floor)
    hists = np.concatenate([hists] * 4)  # 3204 rows: 7 chunks
    serial, serial_width = X._profile_table(mech, hists, eps)
    spy = _Spy(_slow_in_caller(X._profile_chunk, 0.5))
    monkeypatch.setattr(X, "_profile_chunk", spy)
    with cf.ThreadPoolExecutor(1, thread_name_prefix="smoothdp-helper") as helper:
        table, width = X._profile_table(mech, hists, eps, helper)
    names = [name for name, _ in spy.calls]
    assert len(names) == 7
    assert sum("helper" in name for name in names) >= 5
    assert np.array_equal(table, serial) and np.array_equal(width, serial_width)


def test_a_chunk_the_helper_fails_on_is_computed_by_the_caller(monkeypatch):
    from smoothdp_nb.core.smoothed.engines import chunks, exact as X

    mech, eps = sdp.SamplingHistogram(eta=0.9), np.array([0.5, 2.0])
    hists = np.stack([np.arange(2001), 2000 - np.arange(2001)], axis=1)
    monkeypatch.setattr(chunks, "PROFILE_CHUNK", 512 * 2)
    serial, serial_width = X._profile_table(mech, hists, eps)
    real = X._profile_chunk

    def failing_in_helper(*args):
        if "helper" in threading.current_thread().name:
            raise MemoryError("helper out of memory")
        time.sleep(0.05)  # let the helper take a chunk first
        return real(*args)

    monkeypatch.setattr(X, "_profile_chunk", failing_in_helper)
    with cf.ThreadPoolExecutor(1, thread_name_prefix="smoothdp-helper") as helper:
        table, width = X._profile_table(mech, hists, eps, helper)
    assert np.array_equal(table, serial) and np.array_equal(width, serial_width)


def test_composition_deltas_runs_in_a_forkserver_pool_and_matches_a_direct_computation(monkeypatch):
    """Notebook 04's trial function is a package function: a pool that does not fork runs it (in a
    process with threads, no fork, no warning), bit-identical to the serial run; each row is the
    profile of the database drawn record by record, and the spread column the variance of its records."""
    laws = [np.array([0.5, 0.3, 0.2, 0.0]), np.array([0.0, 0.1, 0.2, 0.7])]
    mech = sdp.SamplingAverage(T=3, grid=[-0.5, 0.0, 0.25, 0.5], output="sum")
    kw = dict(mechanism=mech, laws=laws, counts=(5, 4), epsilon=[0.5, 1.0], spread=True)
    serial = sdp.monte_carlo_map(sdp.composition_deltas, 12, 11, chunk=4, progress=False, budget=None, kwargs=kw)
    ex = P.process_pool(1)
    try:
        with _a_running_thread(), _no_fork(monkeypatch) as (caught, unraisable):
            pooled = sdp.monte_carlo_map(
                sdp.composition_deltas, 12, 11, executor=ex, chunk=4, progress=False, budget=None, kwargs=kw
            )
        _assert_no_fork_warning(caught, unraisable)
    finally:
        ex.shutdown()
    assert np.array_equal(pooled, serial)
    # the same databases, drawn and evaluated one by one
    rows = []
    for seed in np.random.SeedSequence(11).spawn(3):
        rng = np.random.default_rng(seed)
        hist = rng.multinomial(5, laws[0], size=4) + rng.multinomial(4, laws[1], size=4)
        for h in hist:
            records = np.repeat(np.arange(4), h)
            rows.append([*np.ravel(sdp.privacy_profile(mech, h, [0.5, 1.0])), records.var()])
    assert np.allclose(serial, np.array(rows), rtol=1e-12, atol=0)
    assert np.array_equal(serial[:, :2], np.array(rows)[:, :2])


def test_composition_deltas_rejects_mismatched_laws_and_counts():
    mech = sdp.SamplingAverage(T=2, grid=[0.0, 1.0], output="sum")
    with pytest.raises(ValueError, match="one entry per law"):
        sdp.composition_deltas(3, np.random.default_rng(0), mech, [[0.5, 0.5]], (2, 2), 1.0)
