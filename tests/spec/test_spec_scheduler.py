"""Dask scheduler addresses in a spec: a malformed one is refused at its key while parsing, and a
scheduler that refuses, is malformed or is not Dask is a SpecError at ``scheduler`` every time,
however many fail in one process (distributed's loop runner must not leak an AssertionError)."""

import socket
import threading

import pytest

from smoothdp_nb.spec import SpecError, parse_spec, run_spec

SMOOTHED = (
    'compute = "smoothed"\nmechanism = {eta = 0.8}\nn = 40\npi = [[0.2, 0.8], [0.6, 0.4]]\n'
    'epsilon = 1.0\nmethod = "monte-carlo"\ntrials = 100\nexecutor = "dask"\n'
)


@pytest.mark.parametrize(
    "address", ["bad", "not an address", "tcp://:::::", "foo://x:1", "tcp://127.0.0.1:99999", "tcp://host", 8786]
)
def test_malformed_scheduler_is_refused_at_its_key(address):
    text = SMOOTHED + f"scheduler = {address!r}\n".replace("'", '"')
    with pytest.raises(SpecError) as err:
        parse_spec(text)
    assert err.value.key == "scheduler" and err.value.line == 9, str(err.value)


def _refused_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


def test_repeated_failing_schedulers_in_one_process_are_spec_errors():
    """Six failing scheduler specs in a row (refused, malformed, a server that is not Dask): every
    one a SpecError at `scheduler`, never a bare AssertionError from distributed's loop runner
    (which a state left by earlier failures can raise)."""
    pytest.importorskip("distributed")
    import dask

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    silent = srv.getsockname()[1]

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    refused = _refused_port()
    addresses = [f"tcp://127.0.0.1:{refused}", "bad", f"tcp://127.0.0.1:{refused}", "bad"] * 2 + [
        f"tcp://127.0.0.1:{silent}"
    ]
    try:
        with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
            for address in addresses:
                with pytest.raises(SpecError) as err:
                    run_spec(SMOOTHED + f'scheduler = "{address}"\n')
                assert err.value.key == "scheduler" and err.value.line == 9, str(err.value)
    finally:
        srv.close()
