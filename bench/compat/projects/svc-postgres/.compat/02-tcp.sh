. .compat/common.sh
. .compat/pg.sh
pg_start 127.0.0.1 54330
"$PG_BIN/psql" -h 127.0.0.1 -p 54330 -U postgres -v ON_ERROR_STOP=1 -f schema.sql
