. .compat/common.sh
go build -o compatweb .
bg server.log ./compatweb
wait_http http://localhost:8087/ server.log
