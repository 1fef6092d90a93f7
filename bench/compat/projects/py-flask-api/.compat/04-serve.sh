. .compat/common.sh
venv -r requirements.txt
bg flask.log flask --app app run --port 5077
wait_http http://localhost:5077/health flask.log
