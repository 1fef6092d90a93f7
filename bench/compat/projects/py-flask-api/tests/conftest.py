import threading

import pytest
from werkzeug.serving import make_server

from app import create_app


@pytest.fixture()
def server(tmp_path):
    """A real HTTP server on a kernel-chosen loopback port, in a thread."""
    app = create_app(str(tmp_path / "t.sqlite"))
    srv = make_server("127.0.0.1", 0, app)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
