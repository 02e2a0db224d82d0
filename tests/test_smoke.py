def test_project_create_and_list(user):
    resp = user.post("/api/v1/project/", json={"name": "smoke-a"})
    assert resp.status_code == 201, resp.get_json()
    body = resp.get_json()
    assert body["name"] == "smoke-a"
    listing = user.get("/api/v1/project/").get_json()
    assert [p["name"] for p in listing["items"]] == ["smoke-a"]
