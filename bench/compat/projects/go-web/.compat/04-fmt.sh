. .compat/common.sh
test -z "$(gofmt -l .)"
