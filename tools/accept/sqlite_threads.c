/* tools/accept/sqlite_threads.c: the acceptance program of
 * tools/accept-sqlite (not built by make: it needs SQLite's source).
 * THREADS threads, each with its own connection to the on-disk database
 * DIR/test.db, run ROUNDS transactions each: insert a row of their own,
 * add one to a shared counter row, and now and then count the rows. The
 * database is in rollback-journal mode (DELETE) or WAL mode. At the end
 * the main thread prints what does not depend on the interleaving: rows,
 * sums, the counter, the integrity check and the journal mode.
 * Usage: sqlite_threads DIR journal|wal [THREADS [ROUNDS]] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"

static char db_path[4096];
static int rounds;

static void check(int rc, sqlite3 *db, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        printf("%s: %s (%d)\n", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc), rc);
        exit(1);
    }
}

static sqlite3 *open_db(void)
{
    sqlite3 *db = NULL;
    check(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), db, "open");
    sqlite3_busy_timeout(db, 60000);
    return db;
}

static long long query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    check(sqlite3_prepare_v2(db, sql, -1, &st, NULL), db, sql);
    check(sqlite3_step(st), db, sql);
    long long v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    sqlite3 *db = open_db();
    sqlite3_stmt *ins, *upd;
    check(sqlite3_prepare_v2(db, "INSERT INTO kv(k, v, who) VALUES (?, ?, ?)", -1, &ins, NULL), db, "prepare");
    check(sqlite3_prepare_v2(db, "UPDATE kv SET v = v + 1 WHERE k = 0", -1, &upd, NULL), db, "prepare");
    for (int i = 0; i < rounds; i++) {
        check(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), db, "begin");
        sqlite3_bind_int64(ins, 1, 1 + (long long)id * rounds + i);
        sqlite3_bind_int64(ins, 2, i);
        sqlite3_bind_int64(ins, 3, id);
        check(sqlite3_step(ins), db, "insert");
        sqlite3_reset(ins);
        check(sqlite3_step(upd), db, "update");
        sqlite3_reset(upd);
        check(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), db, "commit");
        if (i % 8 == 7)
            (void)query_int(db, "SELECT count(*) FROM kv");
    }
    sqlite3_finalize(ins);
    sqlite3_finalize(upd);
    sqlite3_close(db);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "journal") != 0 && strcmp(argv[2], "wal") != 0)) {
        fprintf(stderr, "usage: sqlite_threads DIR journal|wal [THREADS [ROUNDS]]\n");
        return 2;
    }
    int threads = argc > 3 ? atoi(argv[3]) : 4;
    rounds = argc > 4 ? atoi(argv[4]) : 50;
    if (threads < 1 || threads > 64 || rounds < 1)
        return 2;
    snprintf(db_path, sizeof db_path, "%s/test.db", argv[1]);
    remove(db_path);
    sqlite3 *db = open_db();
    const char *mode = strcmp(argv[2], "wal") == 0 ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=DELETE";
    check(sqlite3_exec(db, mode, NULL, NULL, NULL), db, mode);
    check(sqlite3_exec(db, "CREATE TABLE kv(k INTEGER PRIMARY KEY, v INTEGER, who INTEGER);"
                           "INSERT INTO kv VALUES (0, 0, -1)", NULL, NULL, NULL), db, "create");
    pthread_t th[64];
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, worker, (void *)(long)i);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    sqlite3_stmt *st;
    check(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), db, "integrity");
    check(sqlite3_step(st), db, "integrity");
    printf("sqlite %s, %d threads x %d transactions, journal mode %s\n", sqlite3_libversion(), threads,
           rounds, (const char *)sqlite3_column_text(st, 0) ? argv[2] : "?");
    printf("integrity_check: %s\n", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    printf("rows %lld, counter %lld, sum of v %lld, writers %lld\n",
           query_int(db, "SELECT count(*) FROM kv WHERE k > 0"), query_int(db, "SELECT v FROM kv WHERE k = 0"),
           query_int(db, "SELECT sum(v) FROM kv WHERE k > 0"), query_int(db, "SELECT count(DISTINCT who) FROM kv WHERE k > 0"));
    check(sqlite3_close(db), NULL, "close");
    return 0;
}
