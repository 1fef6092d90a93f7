from wordcount import count


def test_count():
    assert count("a b A")["a"] == 2
