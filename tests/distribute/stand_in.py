"""A stand-in for a TensorFlow worker, without TensorFlow: what the private-network tests start as the program.

It serves ``WORKER_MARKER`` over HTTP on its ``TF_CONFIG`` port (so a probe that reaches it can tell), waits until it
reaches its peer, writes ``listening-<index>`` (its port) into the run folder, and ends when the test writes
``probed`` there. ``tests/distribute`` and the hub test (``tests/tools/hub``) both start it.
"""

WORKER_MARKER = "a-stand-in-worker"
WORKER = """
import http.server, json, os, socket, sys, threading, time
from pathlib import Path
folder, config = Path(sys.argv[1]), json.loads(os.environ["TF_CONFIG"])
mine = config["task"]["index"]
host, port = config["cluster"]["worker"][mine].split(":")


class Marker(http.server.BaseHTTPRequestHandler):  # answers whoever reaches it: the tests look for the marker
    def do_GET(self):
        body = b"MARKER"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = http.server.ThreadingHTTPServer((host, int(port)), Marker)  # a worker's server, on its TF_CONFIG port
threading.Thread(target=server.serve_forever, daemon=True).start()
peer_host, peer_port = config["cluster"]["worker"][1 - mine].split(":")
while True:  # the peer is reachable inside the run's network
    try:
        socket.create_connection((peer_host, int(peer_port)), timeout=5).close()
        break
    except OSError:
        time.sleep(0.05)
(folder / f"listening-{mine}").write_text(port)
while not (folder / "probed").exists():  # until the test has tried from outside
    time.sleep(0.05)
""".replace("MARKER", WORKER_MARKER)
