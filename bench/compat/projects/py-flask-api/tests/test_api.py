import requests

from app import create_app


def test_health_client():
    assert create_app().test_client().get("/health").json == {"status": "ok"}


def test_roundtrip_over_http(server):
    s = requests.Session()
    s.trust_env = False  # a loopback test server, not through any proxy
    assert s.post(f"{server}/notes", json={"body": "hi"}).status_code == 201
    assert s.get(f"{server}/notes").json() == [{"id": 1, "body": "hi"}]
