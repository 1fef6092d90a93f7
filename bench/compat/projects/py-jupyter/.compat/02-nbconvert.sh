. .compat/common.sh
# nbconvert runs the notebook through nbclient: an ipykernel over ZeroMQ (pyzmq) on loopback ports.
venv -r requirements.txt
jupyter nbconvert --to notebook --execute --output-dir out analysis.ipynb
grep -q '\[0, 1, 4, 9, 16\]' out/analysis.ipynb
