"""The local embedding model in a process of its own, for the web server.

Why: torch runs a forward pass as a few hundred operations, each started from Python, so
the model's thread needs the interpreter lock (the GIL) between any two of them. In the web
process the request's thread runs Python meanwhile (the end-user lookup, the full-text
ranking, other requests), and every such stretch stalls the model. Measured on this 2-core
machine: one query took a median 14 ms alone, 20 ms inside a search, and 249 ms beside a
thread that only ran Python (``torch.jit`` traced models hold the lock as well: 100 ms).
A process has a lock of its own (README, *Benchmarks*; the measurements: bench/HISTORY.md, session 7).
ONNX Runtime, the default runtime since session 11, runs a forward pass without the lock;
the process still measured faster than a thread: p50 18-19 against 20-22 ms over HTTP at 1M
(bench/HISTORY.md, session 11), and it keeps the model's memory out of the web process.

How: one child process (``multiprocessing``, started with ``spawn``, so it shares no
threads or locks with its parent) loads the model and answers requests over pipes, one
pipe per caller at a time, in the order they arrive. The caller's own thread sends the texts
and later receives the vectors, so no other thread of the parent has to wake for it. A
child that dies is started again on a later call (at most once per
``RESTART_INTERVAL_SECONDS``); the calls that found it dead raise ``ModelBackendError``.

As with any ``spawn``-ed process, the program's main module must be importable without side
effects (``if __name__ == "__main__":``); ``manage.py``, uvicorn and gunicorn are.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import queue
import signal
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path

from memories.llm.base import EmbeddingBatch, ModelBackendError

__all__ = ["RESTART_INTERVAL_SECONDS", "EmbeddingProcess"]

logger = logging.getLogger(__name__)

# A child that died is started again at most this often (a model that cannot load, or is
# killed for memory each time, would otherwise be reloaded on every request).
RESTART_INTERVAL_SECONDS = 5.0

# What a broken pipe to the child raises, depending on where it broke.
_PIPE_ERRORS = (EOFError, OSError)


@dataclass(eq=False)
class _Channel:
    """The parent's end of one pipe; ``pending``: a request was sent whose answer nobody read."""

    connection: Connection
    generation: int
    pending: bool = False


class _PendingEmbedding(Future):
    """A ``Future`` whose result is read from the child's pipe, in the thread that asks for it.

    It completes when ``result()``, ``exception()`` or ``cancel()`` is called, not by
    itself: done-callbacks run then, in that thread.
    """

    def __init__(self, owner: EmbeddingProcess, channel: _Channel) -> None:
        super().__init__()
        self._owner, self._channel = owner, channel
        self._receive_lock = threading.Lock()
        # Dropped unread (a caller that neither read nor cancelled it): the pipe goes back to
        # the pool marked, and its next user reads the stale answer first.
        self._finalizer = weakref.finalize(self, owner._release, channel, True)

    def result(self, timeout: float | None = None) -> EmbeddingBatch:
        self._receive(timeout)
        return super().result(0)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        self._receive(timeout)
        return super().exception(0)

    def cancel(self) -> bool:
        """Give the answer up, without waiting for it: the pipe goes back to the pool marked,
        and its next user reads and drops the answer first."""
        with self._receive_lock:
            if self.done():
                return self.cancelled()
            self._finalizer.detach()
            self._owner._release(self._channel, True)
            return super().cancel()

    def _receive(self, timeout: float | None) -> None:
        with self._receive_lock:
            if self.done():
                return
            connection = self._channel.connection
            # A timeout leaves everything as it was: the answer can still be read, or cancelled.
            if timeout is not None and not _ready(connection, timeout):
                raise TimeoutError(f"No embedding after {timeout} s.")
            self._finalizer.detach()
            try:
                status, payload = connection.recv()
            except _PIPE_ERRORS as exc:
                self._owner._broken(self._channel)
                self.set_exception(_unavailable(exc))
                return
            self._owner._release(self._channel, False)
            if status == "ok":
                self.set_result(EmbeddingBatch(vectors=payload.tolist()))
            else:
                self.set_exception(ModelBackendError("MODEL_BACKEND_ERROR", f"The embedding model failed: {payload}"))


def _ready(connection: Connection, timeout: float) -> bool:
    try:
        return connection.poll(timeout)
    except _PIPE_ERRORS:
        return True  # recv() reports it


class EmbeddingProcess:
    """``LocalEmbedder``'s model run by a child process; ``submit`` returns at once.

    Args:
        threads: the runtime's threads in the child.
        batch_size: the child's ``LocalEmbedder`` batch size.
        runtime, cache_dir: the child's ``LocalEmbedder`` runtime and ONNX cache folder.
        channels: pipes, i.e. calls in flight at once; a further caller waits for a free one.
    """

    def __init__(
        self,
        *,
        threads: int,
        batch_size: int,
        channels: int,
        runtime: str = "onnxruntime",
        cache_dir: Path | None = None,
    ) -> None:
        self.threads, self.batch_size, self.channels = threads, batch_size, channels
        self.runtime, self.cache_dir = runtime, cache_dir
        self._reset()
        os.register_at_fork(after_in_child=self._after_fork)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._process: multiprocessing.process.BaseProcess | None = None
        self._generation = 0
        self._started_at = float("-inf")
        self._channels: list[_Channel] = []
        # One queue for the object's life: a caller waiting on it when the child is replaced
        # gets one of the new pipes.
        self._free: queue.SimpleQueue[_Channel] = queue.SimpleQueue()

    def submit(self, texts: Sequence[str]) -> Future[EmbeddingBatch]:
        """Send ``texts`` to the child; the future's ``result()`` gives their vectors.

        The caller must read the result or ``cancel()`` the future: until then it holds one
        of the ``channels``.

        Raises:
            ModelBackendError: ``MODEL_BACKEND_UNAVAILABLE`` when the child is dead and was
                restarted less than ``RESTART_INTERVAL_SECONDS`` ago. ``result()`` raises it
                when the child died meanwhile; ``MODEL_BACKEND_ERROR`` when the model raised.
        """
        channel = self._take()
        try:
            if channel.pending:
                channel.connection.recv()
                channel.pending = False
            channel.connection.send(list(texts))
        except _PIPE_ERRORS as exc:
            self._broken(channel)
            failed: Future[EmbeddingBatch] = Future()
            failed.set_exception(_unavailable(exc))
            return failed
        except BaseException:
            self._broken(channel)  # its state is unknown: start afresh
            raise
        return _PendingEmbedding(self, channel)

    @property
    def pid(self) -> int | None:
        """The child's process id (``None`` before the first call)."""
        process = self._process
        return process.pid if process is not None else None

    def _take(self) -> _Channel:
        """A free pipe to the current child, starting the child if there is none."""
        dropped = None
        while True:
            with self._lock:
                if self._process is None:
                    if time.monotonic() - self._started_at < RESTART_INTERVAL_SECONDS:
                        if dropped is not None:
                            self._free.put(dropped)  # the next waiter wakes, and finds out too
                        raise _unavailable(None)
                    self._start()
            channel = self._free.get()
            # Compared with the generation now, not the one before the wait: the child may
            # have been replaced meanwhile, and this may be a pipe to the new one.
            with self._lock:
                if channel.generation == self._generation:
                    return channel
            dropped = channel  # a pipe to a dead or replaced child: drop it and look again

    def _start(self) -> None:
        """A new child and a new set of pipes (called with ``_lock`` held)."""
        self._generation += 1
        self._started_at = time.monotonic()
        self._channels, children = [], []
        for _ in range(self.channels):
            parent_end, child_end = multiprocessing.Pipe()
            children.append(child_end)
            channel = _Channel(parent_end, self._generation)
            self._channels.append(channel)
            self._free.put(channel)
        context = multiprocessing.get_context("spawn")
        process = context.Process(
            target=_serve,
            kwargs={
                "connections": children,
                "threads": self.threads,
                "batch_size": self.batch_size,
                "runtime": self.runtime,
                "cache_dir": self.cache_dir,
            },
            name="embedding-model",
            daemon=True,
        )
        process.start()
        for child_end in children:
            child_end.close()
        self._process = process

    def _release(self, channel: _Channel, pending: bool) -> None:
        with self._lock:
            if channel.generation == self._generation:
                channel.pending = pending
                self._free.put(channel)

    def _broken(self, channel: _Channel) -> None:
        """The child is gone (or a pipe is unusable): stop it; a later call starts another."""
        with self._lock:
            process = self._process
            if channel.generation != self._generation or process is None:
                return
            self._process = None
            self._generation += 1  # every pipe to the old child is dropped as it comes back
            # Callers waiting for a pipe would wait for good (the busy ones are not given
            # back): wake each with a dropped pipe; it starts the child again or reports it.
            for stale in self._channels:
                self._free.put(stale)
        if process.is_alive():
            process.terminate()
        process.join(timeout=5)
        logger.warning("The embedding model's process stopped (exit code %s).", process.exitcode)

    def _after_fork(self) -> None:
        """In a forked child of this process: forget the parent's model process and pipes."""
        for channel in self._channels:
            channel.connection.close()
        self._reset()


def _unavailable(exc: BaseException | None) -> ModelBackendError:
    cause = f" ({type(exc).__name__})" if exc is not None else ""
    return ModelBackendError(
        "MODEL_BACKEND_UNAVAILABLE", f"The embedding model's process stopped{cause}; it is being restarted."
    )


def _serve(
    *, connections: list[Connection], threads: int, batch_size: int, runtime: str, cache_dir: Path | None
) -> None:
    """The child: load the model, then answer each pipe's requests until every pipe is closed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    from memories.llm.local import LocalEmbedder

    embedder = LocalEmbedder(threads=threads, batch_size=batch_size, runtime=runtime, cache_dir=cache_dir)
    embedder.encode(["warm up"])
    open_connections = list(connections)
    while open_connections:
        for connection in wait(open_connections):
            try:
                texts = connection.recv()
            except _PIPE_ERRORS:
                open_connections.remove(connection)
                continue
            try:
                reply = ("ok", embedder.encode(texts))
            except Exception as exc:  # noqa: BLE001 - reported to the caller, the child goes on
                reply = ("error", f"{type(exc).__name__}: {exc}")
            try:
                connection.send(reply)
            except _PIPE_ERRORS:
                open_connections.remove(connection)
