"""How the platform's own processes run on the machine: as an unprivileged platform user, in a user namespace
that maps nothing but that user and the projects' uids (``launch``), set up by ``myapp run`` when it is started
as root (``platform_user``)."""
