#!/usr/bin/env python3
"""How anvil's cost per mined transaction and per read grows with the size of its state
(issue 37's profile: the keeper's cycle slows faster than the number of markets grows).

Starts the given anvil on 127.0.0.1 with any extra flags (e.g. --prune-history), times 300
mined ETH transfers and 300 eth_getBalance reads on an empty state, then again after giving
1000 and then 3000 accounts code and 30 storage slots each (anvil_setCode, anvil_setStorageAt:
about what that many markets hold). Prints milliseconds per call; stops the anvil it started.

    python3 script/anvil-growth.py .toolchain/bin/anvil --prune-history
    python3 script/anvil-growth.py .toolchain/bin/anvil
"""
import http.client
import json
import subprocess
import sys
import time

PORT = 18545
CALLS = 300
SLOTS = 30


def rpc(conn, method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    conn.request("POST", "/", body, {"Content-Type": "application/json"})
    reply = json.loads(conn.getresponse().read())
    if "error" in reply:
        raise RuntimeError(f"{method}: {reply['error']}")
    return reply["result"]


def phase(conn, sender, to):
    start = time.perf_counter()
    for _ in range(CALLS):
        rpc(conn, "eth_sendTransaction", [{"from": sender, "to": to, "value": "0x1"}])
    mined = (time.perf_counter() - start) / CALLS * 1000
    start = time.perf_counter()
    for _ in range(CALLS):
        rpc(conn, "eth_getBalance", [to, "latest"])
    read = (time.perf_counter() - start) / CALLS * 1000
    return mined, read


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    args = [sys.argv[1], "--host", "127.0.0.1", "--port", str(PORT), "--silent", *sys.argv[2:]]
    anvil = subprocess.Popen(args)
    try:
        time.sleep(2)
        conn = http.client.HTTPConnection("127.0.0.1", PORT)
        sender, to = rpc(conn, "eth_accounts", [])[:2]
        rows = [("empty state", *phase(conn, sender, to))]
        done = 0
        for target in (1000, 3000):
            while done < target:
                addr = "0x%040x" % (0x100000 + done)
                rpc(conn, "anvil_setCode", [addr, "0x00"])
                for slot in range(SLOTS):
                    key, value = "0x%064x" % slot, "0x%064x" % (slot + 1)
                    rpc(conn, "anvil_setStorageAt", [addr, key, value])
                done += 1
            rows.append((f"{done} accounts x {SLOTS} slots", *phase(conn, sender, to)))
        print("anvil flags:", " ".join(sys.argv[2:]) or "(none)")
        for name, mined, read in rows:
            print(f"{name:>26}: {mined:7.2f} ms per mined transfer, {read:6.3f} ms per read")
    finally:
        anvil.terminate()
        anvil.wait()


if __name__ == "__main__":
    main()
