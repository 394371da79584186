"""Signatures checked by a process of its own, batch after batch, while its caller goes on: a
thread would not do, since every return from libsodium waits for the caller's hold on the GIL.

``python -m athenaeum.services.identity.verifier`` reads frames from stdin (a 4-byte length,
then a msgpack list of [public key, signature, message]) and answers each with a frame of
booleans, in order.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import msgspec

from athenaeum.services.identity.signing import all_verify
from athenaeum.services.runtime.frames import FrameWriter, read_frame, write_frame

Signed = tuple[str, str, bytes]  # public key, base64url signature, message
_decode_batch = msgspec.msgpack.Decoder(list[Signed]).decode
_decode_results = msgspec.msgpack.Decoder(list[bool]).decode
WAITING = 8  # batches sent and not yet written to the worker, at most


class Verifier:
    """The worker process, sent batches; ``results()`` waits for the answers to all of them."""

    def __init__(self) -> None:
        self._process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE)
        self._answers: list[list[bool]] = []
        # Drained as they come, so the worker never blocks on a full pipe while batches go in.
        self._reader = threading.Thread(target=self._drain, name="athenaeum-verifier-reader", daemon=True)
        self._reader.start()
        assert self._process.stdin is not None
        # Written by a thread too: a batch the worker has yet to take (it is still verifying
        # the last) holds up the audit only once WAITING wait behind it.
        self._batches = FrameWriter(self._process.stdin, WAITING, "athenaeum-verifier-writer")
        self._sent = 0

    def send(self, batch: list[Signed]) -> None:
        self._batches.send(msgspec.msgpack.encode(batch))
        self._sent += 1

    def results(self) -> list[list[bool]]:
        """Each batch's answers, in the order sent; the worker then ends."""
        assert self._process.stdin is not None
        self._batches.finish()
        self._process.stdin.close()
        self._reader.join()
        self._process.wait()
        if len(self._answers) != self._sent:
            raise RuntimeError(f"the signature verifier answered {len(self._answers)} of {self._sent} batches")
        return self._answers

    def close(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
            self._process.wait()
        self._batches.abandon()  # (a write under way fails at once: the worker is gone)

    def _drain(self) -> None:
        assert self._process.stdout is not None
        while (frame := read_frame(self._process.stdout)) is not None:
            self._answers.append(_decode_results(frame))


def main() -> None:
    while (frame := read_frame(sys.stdin.buffer)) is not None:
        write_frame(sys.stdout.buffer, msgspec.msgpack.encode(all_verify(_decode_batch(frame))))


if __name__ == "__main__":
    main()
