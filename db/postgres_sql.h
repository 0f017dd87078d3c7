/* The portable SQL of db/ (db/db_internal.h) as PostgreSQL reads it
 * (db/postgres_sql.c). Pure text functions, tested in tests/test_db_pg_sql.c. */
#ifndef CLOUDFIT_DB_POSTGRES_SQL_H
#define CLOUDFIT_DB_POSTGRES_SQL_H

/* A query with SQLite's parameters (?1, ?2, or bare ?, each bare one
 * numbered one past the largest so far) rewritten with PostgreSQL's ($1,
 * $2); text inside quotes is left alone. *n_params gets the largest
 * number. Caller frees; NULL when out of memory. */
char *cf_pg_translate_query(const char *sql, int *n_params);
/* A migration in SQLite's type names rewritten with PostgreSQL's
 * equivalents (see the table in postgres_sql.c). Caller frees; NULL when
 * out of memory. */
char *cf_pg_translate_schema(const char *sql);

#endif
