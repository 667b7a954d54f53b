def test_create_and_get(board):
    post = board.post("Dark mode please")
    r = board.get(post["id"])
    assert r.status_code == 200, r.text
    assert r.json() == post
