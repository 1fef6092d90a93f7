. .compat/common.sh
venv virtualenv
virtualenv -q .v2
.v2/bin/pip install -q -e .
echo "b a b" | .v2/bin/wordcount
