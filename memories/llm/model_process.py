"""The local embedding model in a process of its own, for the web server.

Why: torch runs a forward pass as a few hundred operations, each started from Python, so
the model's thread needs the interpreter lock (the GIL) between any two of them. In the web
process the request's thread runs Python meanwhile (the end-user lookup, the full-text
ranking, other requests), and every such stretch stalls the model. Measured on this 2-core
machine: one query took a median 14 ms alone, 20 ms inside a search, and 249 ms beside a
thread that only ran Python (``torch.jit`` traced models hold the lock as well: 100 ms).
A process has a lock of its own (README, *Benchmarks*).

How: one child process (``multiprocessing``, started with ``spawn``, so it shares no
threads or locks with its parent) loads the model and answers requests over pipes, one
pipe per caller at a time, in the order they arrive. The caller's own thread sends the texts
and later receives the vectors, so no other thread of the parent has to wake for it. A
child that dies is started again on the next call; the call that found it dead raises
``ModelBackendError``.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
import weakref
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait

from memories.llm.base import EmbeddingBatch, ModelBackendError

__all__ = ["EmbeddingProcess"]

# What a broken pipe to the child raises, depending on where it broke.
_PIPE_ERRORS = (EOFError, OSError)


@dataclass(eq=False)
class _Channel:
    """The parent's end of one pipe; ``pending``: a request was sent whose answer nobody read."""

    connection: Connection
    generation: int
    pending: bool = False


class _PendingEmbedding(Future):
    """A ``Future`` whose result is read from the child's pipe, in the thread that asks for it."""

    def __init__(self, owner: EmbeddingProcess, channel: _Channel) -> None:
        super().__init__()
        self._owner, self._channel = owner, channel
        self._receive_lock = threading.Lock()
        # Abandoned unread (the caller failed before asking): the pipe goes back to the pool
        # marked, and its next user reads the stale answer first.
        self._finalizer = weakref.finalize(self, owner._release, channel, True)

    def result(self, timeout: float | None = None) -> EmbeddingBatch:
        with self._receive_lock:
            if not self.done():
                self._receive(timeout)
        return super().result(0)

    def exception(self, timeout: float | None = None) -> BaseException | None:
        with self._receive_lock:
            if not self.done():
                self._receive(timeout)
        return super().exception(0)

    def _receive(self, timeout: float | None) -> None:
        connection = self._channel.connection
        try:
            if timeout is not None and not connection.poll(timeout):
                raise TimeoutError(f"No embedding after {timeout} s.")
            status, payload = connection.recv()
        except _PIPE_ERRORS as exc:
            self._finalizer.detach()
            self._owner._broken(self._channel)
            self.set_exception(_unavailable(exc))
            return
        self._finalizer.detach()
        self._owner._release(self._channel, False)
        if status == "ok":
            self.set_result(EmbeddingBatch(vectors=payload.tolist()))
        else:
            self.set_exception(ModelBackendError("MODEL_BACKEND_ERROR", f"The embedding model failed: {payload}"))


class EmbeddingProcess:
    """``LocalEmbedder``'s model run by a child process; ``submit`` returns at once.

    Args:
        threads: torch threads in the child.
        batch_size: the child's ``LocalEmbedder`` batch size.
        channels: pipes, i.e. calls in flight at once; a further caller waits for a free one.
    """

    def __init__(self, *, threads: int, batch_size: int, channels: int) -> None:
        self.threads, self.batch_size, self.channels = threads, batch_size, channels
        self._lock = threading.Lock()
        self._process: multiprocessing.process.BaseProcess | None = None
        self._pid: int | None = None
        self._generation = 0
        self._free: queue.SimpleQueue[_Channel] = queue.SimpleQueue()

    def submit(self, texts: Sequence[str]) -> Future[EmbeddingBatch]:
        """Send ``texts`` to the child; the future's ``result()`` gives their vectors.

        ``result()`` raises ``ModelBackendError``: ``MODEL_BACKEND_UNAVAILABLE`` when the
        child died (the next call starts a new one), ``MODEL_BACKEND_ERROR`` when the model
        raised.
        """
        self._ensure_started()
        channel = self._free.get()
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
        return _PendingEmbedding(self, channel)

    @property
    def pid(self) -> int | None:
        """The child's process id (``None`` before the first call)."""
        return self._process.pid if self._process is not None else None

    def _ensure_started(self) -> None:
        if self._process is not None and self._pid == os.getpid():
            return
        with self._lock:
            if self._process is None or self._pid != os.getpid():
                self._start()

    def _start(self) -> None:
        """A new child and a new set of pipes (called with ``_lock`` held)."""
        self._generation += 1
        self._free = queue.SimpleQueue()
        children = []
        for _ in range(self.channels):
            parent_end, child_end = multiprocessing.Pipe()
            children.append(child_end)
            self._free.put(_Channel(parent_end, self._generation))
        context = multiprocessing.get_context("spawn")
        process = context.Process(
            target=_serve,
            kwargs={"connections": children, "threads": self.threads, "batch_size": self.batch_size},
            name="embedding-model",
            daemon=True,
        )
        process.start()
        for child_end in children:
            child_end.close()
        self._process, self._pid = process, os.getpid()

    def _release(self, channel: _Channel, pending: bool) -> None:
        if channel.generation == self._generation:
            channel.pending = pending
            self._free.put(channel)

    def _broken(self, channel: _Channel) -> None:
        """The child is gone: the next call starts another."""
        with self._lock:
            if channel.generation == self._generation and self._process is not None:
                if self._process.is_alive():
                    self._process.terminate()
                self._process.join(timeout=5)
                self._process = None


def _unavailable(exc: BaseException) -> ModelBackendError:
    return ModelBackendError(
        "MODEL_BACKEND_UNAVAILABLE", f"The embedding process stopped ({type(exc).__name__}); it is being restarted."
    )


def _serve(*, connections: list[Connection], threads: int, batch_size: int) -> None:
    """The child: load the model, then answer each pipe's requests until every pipe is closed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    from memories.llm.local import LocalEmbedder

    embedder = LocalEmbedder(threads=threads, batch_size=batch_size)
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
