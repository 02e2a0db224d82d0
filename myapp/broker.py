"""The embedded broker: kombu's filesystem transport, with messages written atomically.

kombu's own `_put` creates the message file and then writes it, so a worker polling the
folder can move and read it while it is still empty and die on a JSON error (seen with
`myapp run` under load). Here a message is written under a name no queue matches and
renamed into place; a rename within one folder is atomic, so readers see all or nothing.
"""
from __future__ import annotations

import os
import uuid
from time import monotonic

from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

SCHEME = "myappfs"


class Channel(filesystem.Channel):
    # kombu's own base classes disagree on the argument's name (message vs payload).
    def _put(self, queue, payload, **kwargs):  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.partial")
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise filesystem.ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel


TRANSPORT_ALIASES[SCHEME] = f"{__name__}:Transport"
