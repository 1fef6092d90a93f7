. .compat/common.sh
# An installed console script in a fresh environment, then its tests from an editable install.
venv -e . pytest
echo "x y x" | wordcount
pytest -q | tail -n 1
