. .compat/common.sh
# pytest-xdist: worker processes driven over execnet pipes.
venv -e . pytest pretend pytest-xdist
pytest -q -n 2 tests | tail -n 2
