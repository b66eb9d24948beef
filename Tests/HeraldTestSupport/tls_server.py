"""A small HTTPS/1.1 server for the TLS tests of the socket HTTP client.

Its listening socket is file descriptor 0 (the test binds it, so it knows the port before this
starts). Usage: tls_server.py CERT KEY [MAX_VERSION]; MAX_VERSION (TLSv1_1) caps the versions
offered, at OpenSSL security level 0, which TLS 1.1 needs. Paths:
  /hold?seconds=N   answers "held" after N seconds (a slow service)
  /holding          answers how many /hold requests are waiting now
  /count            answers "connection <c> request <r>" (keep-alive reuse shows as c staying 1)
  /cut              promises 1000 bytes, sends 10, and drops the connection without close_notify
  /redirect         302 to /count
  /feed.rss         a small RSS 2.0 feed of two items
  /hook             answers {"received": true} (a webhook receiver; POST it)
A POST reads its body and is answered as a GET.
"""
import http.server
import itertools
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import warnings

connections = itertools.count(1)
holding = [0]
holding_lock = threading.Lock()

FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Private feed</title><link>https://localhost/</link>
<item><guid>urn:tls-test:2</guid><title>Second</title><link>https://localhost/2</link></item>
<item><guid>urn:tls-test:1</guid><title>First</title><link>https://localhost/1</link></item>
</channel></rss>
"""


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.connection_number = next(connections)
        self.requests = 0

    def log_message(self, format, *args):
        pass

    def answer(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.requests += 1
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/hold":
            with holding_lock:
                holding[0] += 1
            try:
                time.sleep(float(query.get("seconds", ["1"])[0]))
            finally:
                with holding_lock:
                    holding[0] -= 1
            self.answer(200, b"held")
        elif url.path == "/holding":
            with holding_lock:
                count = holding[0]
            self.answer(200, str(count).encode())
        elif url.path == "/count":
            self.answer(200, f"connection {self.connection_number} request {self.requests}".encode())
        elif url.path == "/cut":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"only ten b")
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        elif url.path == "/redirect":
            self.answer(302, b"", [("Location", "/count")])
        elif url.path == "/feed.rss":
            self.answer(200, FEED, [("Content-Type", "application/rss+xml")])
        elif url.path == "/hook":
            self.answer(200, b'{"received": true}', [("Content-Type", "application/json")])
        else:
            self.answer(404, b"no such path")

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.do_GET()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, listening, context):
        super().__init__(listening.getsockname(), Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = listening
        self.context = context

    def get_request(self):
        client, address = self.socket.accept()
        client.setblocking(True)
        # The handshake runs in the connection's thread, so a refused one does not stall accept.
        return self.context.wrap_socket(client, server_side=True, do_handshake_on_connect=False), address

    def process_request_thread(self, request, client_address):
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError):
            self.shutdown_request(request)
            return
        super().process_request_thread(request, client_address)

    def handle_error(self, request, client_address):
        pass


def main():
    # The test runner's threads block most signals and a child inherits that mask: without
    # this, the SIGTERM that stops the server would wait forever.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    if len(sys.argv) > 3:
        # TLS 1.0 and 1.1 are deprecated in Python too; the test asks for them on purpose.
        warnings.simplefilter("ignore", DeprecationWarning)
        context.set_ciphers("DEFAULT:@SECLEVEL=0")
        context.minimum_version = ssl.TLSVersion.MINIMUM_SUPPORTED
        context.maximum_version = getattr(ssl.TLSVersion, sys.argv[3])
    listening = socket.socket(fileno=0)
    listening.setblocking(True)
    Server(listening, context).serve_forever()


if __name__ == "__main__":
    main()
