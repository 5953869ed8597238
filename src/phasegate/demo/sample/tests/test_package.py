import ratelimit


def test_package_has_a_version():
    assert ratelimit.__version__
