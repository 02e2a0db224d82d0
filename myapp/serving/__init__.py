"""Model serving: what a service should run (``traffic``), how it is rendered
(``manifests``), the worker that makes it so (``controller``) and the local router's shared secret
(``router_auth``). The web stores intent and enqueues; only the worker talks to backends."""
