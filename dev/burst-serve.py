#!/usr/bin/env python3
"""A mixed burst against `rnnsearch serve`, on loopback only and bounded in
requests and seconds: valid translate (single, batched, OpenNMT-py) and align
requests side by side with every kind the server refuses (foreign Host,
cross-origin, text/plain, no token, two Content-Lengths, length with chunks,
answers over --max-answer, batches over --max-batch, 40 000-key bodies,
control bytes in the method, slow header drips, clients that never read their
answer), then SIGTERM while answers are in transfer.
Meant for sanitizer builds: it prints how many answers of each status came
back and whatever the server wrote to stderr, and exits 1 when the server
reported a sanitizer finding, crashed, or exited non-zero.

    dev/burst-serve.py PROGRAM MODEL [ROUNDS]
"""
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

program, model = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
assert 1 <= rounds <= 1000

server = subprocess.Popen(
    [program, "serve", "-m", model, "--port", "0", "--threads", "2", "--timeout", "2",
     "--max-answer", "200000", "--max-body", "1048576", "--max-chars", "4000",
     "--token", "burst-token-1"],
    stderr=subprocess.PIPE, text=True)
line = server.stderr.readline()
match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
if not match:
    print("no address in:", line, file=sys.stderr)
    sys.exit(1)
port = int(match.group(1))
errors = []
threading.Thread(target=lambda: errors.extend(server.stderr), daemon=True).start()
statuses = Counter()
lock = threading.Lock()
TOKEN = "Authorization: Bearer burst-token-1\r\n"
SENT = "the tall horse sees a baker"


def exchange(data, read=True, timeout=10.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        if not read:
            return
        chunks = []
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
        reply = b"".join(chunks)
        status = reply[9:12].decode() if reply.startswith(b"HTTP/1.1") else "closed"
    except OSError:
        status = "closed"
    finally:
        s.close()
    with lock:
        statuses[status] += 1


def post(path, body, headers=TOKEN + "Host: localhost\r\nContent-Type: application/json\r\n"):
    body = body.encode()
    return (f"POST {path} HTTP/1.1\r\n{headers}Connection: close\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def one_round(k):
    text = " ".join([SENT] * (1 + k % 5))
    exchange(post("/api/translate", '{"text": "%s", "beam": %d}' % (text, 1 + k % 4)))
    exchange(post("/api/align", '{"source": "%s", "target": "ka vidat"}' % text))
    exchange(post("/api/translate", '{"text": ["%s", "%s", "x"], "beam": %d}'
                  % (text, SENT, 1 + k % 3)))                                # a batch
    exchange(post("/translator/translate", '[{"src": "%s", "id": 100}, {"src": "x"}]' % text))
    exchange(post("/api/translate", '{"text": ["x", 5]}'))                   # a bad item
    exchange(post("/api/translate", '{"text": [%s]}' % ",".join(['"x"'] * 100)))  # over --max-batch
    exchange(post("/api/translate", '{"text": "%s", "beam": 16, "n_best": 16, "svg": true}'
                  % " ".join([SENT] * 8)))                                   # over --max-answer
    exchange(post("/api/translate", '{"text": "x"}',
                  TOKEN + "Host: attacker.example\r\nContent-Type: text/plain\r\n"))
    exchange(post("/api/translate", '{"text": "x"}',
                  TOKEN + "Host: localhost\r\nOrigin: http://attacker.example\r\n"
                  "Content-Type: application/json\r\n"))
    exchange(post("/api/translate", '{"text": "x"}', "Host: localhost\r\nContent-Type: application/json\r\n"))
    exchange(post("/api/translate", '{"text": "x"}', TOKEN + "Host: localhost\r\nContent-Type: text/plain\r\n"))
    exchange(("POST /api/translate HTTP/1.1\r\nHost: localhost\r\n" + TOKEN +
              "Content-Type: application/json\r\nContent-Length: 14\r\nContent-Length: 40\r\n\r\n"
              '{"text": "x"}GET / HTTP/1.1\r\n\r\n').encode())
    exchange(("POST /api/translate HTTP/1.1\r\nHost: localhost\r\n" + TOKEN +
              "Content-Type: application/json\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
              'd\r\n{"text": "x"}\r\n0\r\n\r\n').encode())
    exchange(post("/api/translate", "{" + ",".join('"k%d":%d' % (i, i) for i in range(40000)) + "}"))
    exchange(("G\x1b[2J\x07T / HTTP/1.1\r\nHost: localhost\r\n" + TOKEN + "\r\n").encode())
    exchange(post("/api/translate", '{"text": "x", "model": "%s"}' % ("é" * 150)))
    exchange(post("/api/translate", '{"text": "%s", "beam": 8, "n_best": 8}' % text), read=False)


def drip():
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
    for s in socks:
        s.sendall(b"POST /api/translate HTTP/1.1\r\n")
    for _ in range(10):
        for s in socks:
            try:
                s.sendall(b"X-Slow: 1\r\n")
            except OSError:
                pass
        time.sleep(0.5)
    for s in socks:
        s.close()


start = time.time()
threads = [threading.Thread(target=drip)]
threads += [threading.Thread(target=lambda c=c: [one_round(c * rounds + k) for k in range(rounds)])
            for c in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
# Answers in transfer at the stop: a client that reads slowly.
slow = socket.create_connection(("127.0.0.1", port))
slow.sendall(post("/api/translate", '{"text": "%s", "beam": 8, "n_best": 8, "svg": true}' % SENT))
time.sleep(0.3)
server.send_signal(signal.SIGTERM)
while slow.recv(4096):
    time.sleep(0.001)
slow.close()
code = server.wait(timeout=30)
time.sleep(0.2)
seconds = time.time() - start
print("%d requests in %.1f s; statuses: %s; exit %d"
      % (sum(statuses.values()), seconds, dict(sorted(statuses.items())), code))
findings = [l for l in errors if "Sanitizer" in l or "runtime error" in l or "WARNING:" in l]
for l in errors:
    if "rnnsearch serve:" not in l:
        sys.stdout.write(l)
sys.exit(1 if findings or code != 0 else 0)
