. .compat/common.sh
venv -r requirements.txt
python - <<'PY'
import nbformat
from nbclient import NotebookClient
nb = nbformat.read("analysis.ipynb", as_version=4)
NotebookClient(nb, timeout=120, kernel_name="python3").execute()
print(nb.cells[1].outputs[0]["data"]["text/plain"])
PY
