"""A web process of the platform for the tests of limits across processes (test_shared_limits.py): the
app on MYAPP_HOME (no Redis), driven by JSON commands on stdin, one JSON answer per line on stdout.

    python -m tests.security.web_process '{"MYAPP_LOGIN_RATE_PER_IP": "3 per minute", ...}'
    {"do": "login", "username": ..., "password": ..., "ip": ...}  -> {"status": 200, "message": ...}
    {"do": "stream", "url": ..., "token": ...}                    -> {"status": 200} (held open)
    {"do": "close"}                                               -> {"status": 0} (every held stream closed)
"""
from __future__ import annotations

import json
import sys

from myapp.app import create_app


def main() -> None:
    app = create_app({"TESTING": True, **json.loads(sys.argv[1])})
    held = []
    print(json.dumps({"ready": app.config["MYAPP_SHARED_LIMITS_FILE"]}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        client = app.test_client()
        message = None
        if command["do"] == "login":
            answer = client.post("/api/v1/security/login", environ_base={"REMOTE_ADDR": command["ip"]},
                                 json={"username": command["username"], "password": command["password"],
                                       "provider": "db"})
            status, message = answer.status_code, (answer.get_json(silent=True) or {}).get("message")
        elif command["do"] == "stream":
            resp = client.get(command["url"], headers={"Authorization": f"Bearer {command['token']}"},
                              buffered=False)
            status = resp.status_code
            if status == 200:
                held.append(resp)
            else:
                resp.close()
        else:
            for resp in reversed(held):  # each holds its request context: the last opened closes first
                resp.close()
            held.clear()
            status = 0
        print(json.dumps({"status": status, "message": message}), flush=True)


if __name__ == "__main__":
    main()
