"""Runs ingest.py against Strata and Milvus 2.3.5 standalone, alternately.

    python compare.py --strata /tmp/ingest-strata --work /tmp/ingestbench \
        --rounds 2 --rows128 100000 --rows768 30000

Each round starts a fresh Strata (temp data dir, free ports), runs the
four cases (dim 128 and 768, 1 and 4 threads), stops it, then does the
same with a fresh Milvus (milvus.MilvusServer from the milvus==2.3.5
package). Every result line is JSON with the server, round and the load
average (from /proc/loadavg) just before and just after the case.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def wait_port(port):
    for _ in range(600):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("port %d never opened" % port)


def cases(a, uri, server, rnd):
    for dim, rows in ((128, a.rows128), (768, a.rows768)):
        for threads in (1, 4):
            before = loadavg()
            out = subprocess.run([sys.executable, os.path.join(HERE, "ingest.py"), "--uri", uri,
                                  "--dim", str(dim), "--rows", str(rows), "--threads", str(threads),
                                  "--name", "ib_%d_%d" % (dim, threads)],
                                 capture_output=True, text=True, timeout=900)
            if out.returncode != 0:
                print(json.dumps({"server": server, "round": rnd, "dim": dim, "threads": threads,
                                  "error": out.stderr[-2000:]}), flush=True)
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            r.update(server=server, round=rnd, load_before=before, load_after=loadavg())
            print(json.dumps(r), flush=True)


def run_strata(a, rnd):
    d = os.path.join(a.work, "strata-%d" % rnd)
    shutil.rmtree(d, ignore_errors=True)
    port, mport = free_port(), free_port()
    log = open(d + ".log", "w")
    p = subprocess.Popen([a.strata, "standalone", "--data-dir", d, "--addr", "127.0.0.1:%d" % port,
                          "--metrics-addr", "127.0.0.1:%d" % mport, "--log-level", "warn"],
                         stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_port(port)
        cases(a, "http://127.0.0.1:%d" % port, "strata", rnd)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
        log.close()


def run_milvus(a, rnd):
    from milvus import MilvusServer
    d = os.path.join(a.work, "milvus-%d" % rnd)
    shutil.rmtree(d, ignore_errors=True)
    s = MilvusServer()
    s.set_base_dir(d)
    s.start()
    try:
        cases(a, "http://127.0.0.1:%d" % s.listen_port, "milvus-2.3.5", rnd)
    finally:
        s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--strata", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--rows128", type=int, default=100000)
    ap.add_argument("--rows768", type=int, default=30000)
    ap.add_argument("--only", choices=["strata", "milvus"], default=None)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    for rnd in range(1, a.rounds + 1):
        if a.only != "milvus":
            run_strata(a, rnd)
        if a.only != "strata":
            run_milvus(a, rnd)


if __name__ == "__main__":
    main()
