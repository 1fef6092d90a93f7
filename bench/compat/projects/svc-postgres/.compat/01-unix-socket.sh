. .compat/common.sh
. .compat/pg.sh
pg_start '' 54329
"$PG_BIN/psql" -h "$PGTMP" -p 54329 -U postgres -v ON_ERROR_STOP=1 -f schema.sql
