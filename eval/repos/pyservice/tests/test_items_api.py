from fastapi.testclient import TestClient


def test_requires_api_key(client: TestClient) -> None:
    response = client.get("/items")
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"


def test_create_and_reserve(client: TestClient, api_key: str) -> None:
    headers = {"X-API-Key": api_key}
    created = client.post(
        "/items", json={"sku": "BOLT-8", "name": "Bolt M8", "quantity": 4}, headers=headers
    )
    assert created.status_code == 201
    reservation = client.post(
        "/reservations", json={"sku": "BOLT-8", "quantity": 3, "holder": "order-7"}, headers=headers
    )
    assert reservation.status_code == 201
    too_many = client.post(
        "/reservations", json={"sku": "BOLT-8", "quantity": 2, "holder": "order-8"}, headers=headers
    )
    assert too_many.status_code == 409
    assert too_many.json()["error"] == "insufficient_stock"
    item = client.get("/items/BOLT-8", headers={"Authorization": f"Bearer {api_key}"}).json()
    assert item["available"] == 1


def test_password_login_issues_key(client: TestClient, user_id: int) -> None:
    response = client.post(
        "/auth/keys", json={"username": "alice", "password": "correct horse battery"}
    )
    assert response.status_code == 201
    assert response.json()["key"].startswith("sr_")
    bad = client.post("/auth/keys", json={"username": "alice", "password": "nope"})
    assert bad.status_code == 401


def test_readiness(client: TestClient) -> None:
    assert client.get("/readyz").json()["status"] == "ready"
