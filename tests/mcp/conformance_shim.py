"""The client command the conformance suite runs for each scenario: `python -I -S conformance_shim.py
SOCKET URL`. It passes the URL and `MCP_CONFORMANCE_CONTEXT` to the `scenario_clients` listening
on SOCKET (`conformance_client.py`), prints the log it gets back and exits with its code.
Standard library only, and no site: it costs a bare interpreter's start.
"""

import json
import os
import socket
import sys


def main(socket_path: str, url: str) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(socket_path)
        with connection.makefile("rw", encoding="utf-8") as stream:
            stream.write(json.dumps({"url": url, "context": context}) + "\n")
            stream.flush()
            answer = json.loads(stream.readline())
    for line in answer["log"]:
        print(line, file=sys.stderr)
    return int(answer["code"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[-1]))
