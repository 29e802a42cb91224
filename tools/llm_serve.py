#!/usr/bin/env python3
"""The one language model server process: llama.cpp's OpenAI-compatible HTTP server (the pinned
xllamacpp wheel, tools/llm.lock) on a loopback address, serving one GGUF file.

    .toolchain/llm/venv/bin/python tools/llm_serve.py --model PATH --port N \
        [--threads 2] [--parallel 1] [--ctx 2048] [--seed 1] [--host 127.0.0.1]
        [--cont-batching on|off]

- Loopback only: a --host that is not a loopback IP address is refused.
- --port 0 lets the server bind a free port itself; the ready line names the one it bound.
- It dies with its parent: PR_SET_PDEATHSIG sends it SIGTERM when the thread that started it
  exits (Linux ties the signal to that thread, not to the parent process). The signal is armed
  only once this script runs, and can land in native code before the handler is back, so with
  --parent PID (the spawner's own pid) it also stops as soon as its parent is any other process:
  at the start, and every half second after. Should its native code hang with the
  interpreter's lock held, a forked watchdog process SIGKILLs it 10 s after its parent is gone.
- Once the server is listening it prints one line to stdout and flushes it:
      llm_serve: ready http://127.0.0.1:PORT model=FILE_NAME
  The model may still be warming up then; a caller waits for GET /health to answer 200.
- SIGTERM or SIGINT stops the server and exits with status 0.
- Responses name the model by its alias, the model file's name (not its absolute path, which
  differs from machine to machine).

Refusals and failures go to stderr with a non-zero exit status.
"""

import os

# Taken first, so that a parent gone before the death signal was armed is noticed below.
PARENT = os.getppid()

import argparse
import ctypes
import ipaddress
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1


def die_with_parent(expected):
    if expected is not None and PARENT != expected:
        sys.exit(f"llm_serve: the parent {expected} exited before the server started")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        sys.exit(f"llm_serve: prctl(PR_SET_PDEATHSIG) failed: {os.strerror(err)}")
    if os.getppid() != PARENT:
        sys.exit("llm_serve: the parent exited before the server started")


def watch_from_outside(grace):
    """Forks a small watchdog process that SIGKILLs this one once its parent has been gone for
    `grace` seconds. The server's own checks run in Python, and the server's native code has
    been seen to wait for good while holding the interpreter's lock (parent gone during the
    model load, on a loaded machine: main thread and a timer both stuck, SIGTERM spent), so a
    check that needs no lock of this process is the last resort. Forked before the server's
    library is imported, while this process has one thread. The watchdog dies with the server
    (PR_SET_PDEATHSIG, SIGKILL) and holds none of its files."""
    server = os.getpid()
    if os.fork() != 0:
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        gone_since = None
        while os.getppid() == server:
            time.sleep(0.5)
            try:
                with open(f"/proc/{server}/stat", "rb") as f:
                    # Field 4, after the command name in parentheses (which may hold spaces).
                    parent = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                break
            if parent == PARENT:
                continue
            gone_since = gone_since or time.monotonic()
            if time.monotonic() - gone_since >= grace:
                os.kill(server, signal.SIGKILL)
                break
    finally:
        os._exit(0)


def loopback(host):
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        sys.exit(f"llm_serve: --host {host!r} is not an IP address; use 127.0.0.1")
    if not address.is_loopback:
        sys.exit(f"llm_serve: --host {host} is not a loopback address; use 127.0.0.1")
    return str(address)


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def port(text):
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port (0 picks a free one)")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the GGUF file to serve")
    parser.add_argument("--port", required=True, type=port, help="0 picks a free port")
    parser.add_argument("--threads", type=positive, default=2)
    parser.add_argument("--parallel", type=positive, default=1, help="request slots")
    parser.add_argument("--ctx", type=positive, default=2048, help="context per slot, tokens")
    parser.add_argument("--seed", type=int, default=1, help="default sampling seed")
    parser.add_argument("--host", default="127.0.0.1", help="a loopback IP address")
    parser.add_argument(
        "--cont-batching",
        choices=["on", "off"],
        default="on",
        help="decode the slots' requests together (llama.cpp's continuous batching)",
    )
    parser.add_argument(
        "--parent", type=positive, help="the spawner's pid: stop once the parent is another"
    )
    args = parser.parse_args()

    die_with_parent(args.parent)
    host = loopback(args.host)
    # The in-process checks below stop it within a second or so; this one, 10 s after them.
    watch_from_outside(10.0)
    model = os.path.abspath(args.model)
    if not os.path.isfile(model):
        sys.exit(f"llm_serve: no model file at {model}; run `make bootstrap`")

    stop = threading.Event()

    def on_signal(_signum, _frame):
        stop.set()

    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, on_signal)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.model_alias = {os.path.basename(model)}
    params.hostnames = [host]
    params.port = args.port
    params.n_ctx = args.ctx * args.parallel
    params.n_parallel = args.parallel
    params.cont_batching = args.cont_batching == "on"
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.sampling.seed = args.seed
    params.ui = False

    try:
        server = xllamacpp.Server(params)
    except Exception as e:  # the server raises a bare exception on a bind or load failure
        sys.exit(f"llm_serve: the server did not start: {e}")
    # The server may have installed handlers of its own; ours decide how it stops.
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, on_signal)

    print(f"llm_serve: ready {server.listening_address} model={os.path.basename(model)}", flush=True)
    # A parent gone (its signal may have landed while the model loaded) stops it too.
    while not stop.wait(0.5) and os.getppid() == PARENT:
        pass
    # Shutting the server down has been seen to hang for good (its HTTP thread still in accept,
    # the main thread waiting on it, SIGTERM already spent), leaving a server nobody owns: the
    # stop gets a few seconds, then the process exits regardless.
    watchdog = threading.Timer(5.0, os._exit, args=(0,))
    watchdog.daemon = True
    watchdog.start()
    del server
    print("llm_serve: stopped", flush=True)


if __name__ == "__main__":
    main()
