"""gunicorn settings of the web process (`gunicorn -c python:myapp.web.gunicorn_conf ...`; `myapp run`, the
Dockerfile and install/ use it).

gthread workers: each open event stream (myapp/api/streams.py) holds a thread of its worker, so a
worker has many threads (MYAPP_WEB_THREADS, default 128; idle ones cost little: the streams' reads are
done by one poller thread per process) and the app keeps an eighth of them free for other requests
(/health, the API) by refusing streams beyond that. Evaluated in the master before it forks: workers
inherit MYAPP_WEB_THREADS, from which the app derives its stream cap.
"""
import os

from myapp.web.gunicorn_worker import assign_slot

# gthread, accepting only while no other worker holds fewer connections (myapp/web/gunicorn_worker.py)
worker_class = "myapp.web.gunicorn_worker.BalancedThreadWorker"
pre_fork = assign_slot
threads = int(os.environ.setdefault("MYAPP_WEB_THREADS", "128"))
accesslog = "-"
logger_class = "myapp.web.gunicorn_log.AccessLogger"  # gunicorn's default access line, built cheaply
# gunicorn closes a connection idle for `keepalive` seconds (default 2); a client that reuses it just then
# (the CLI or a test polling every 2 s) gets "connection reset by peer". Longer than clients' usual pauses
# and than proxies' idle upstream timeouts (nginx: 60 s); idle connections wait in the poller, not a thread.
keepalive = 75
# gunicorn 25+ opens a control socket at one fixed path per user ($HOME/.gunicorn/gunicorn.ctl): several
# platforms on one machine (tests, a second instance) would take it from each other, and nothing here uses it.
control_socket_disable = True
# A keep-alive connection stays with the worker that accepted it. The worker class evens out who accepts;
# closing a connection after KEEPALIVE_REQUESTS answers (as nginx's keepalive_requests does) also sends
# its client back to accept() now and then, so a split made while a worker was restarting does not last.
# The cost is one TCP connect per that many requests; clients reconnect by themselves (`Connection: close`).
KEEPALIVE_REQUESTS = max(1, int(os.environ.get("MYAPP_KEEPALIVE_REQUESTS", "100")))


def pre_request(_worker, req):
    if req.req_number % KEEPALIVE_REQUESTS == 0:
        req.must_close = True  # answered with `Connection: close`
