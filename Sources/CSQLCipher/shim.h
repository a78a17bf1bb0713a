#ifndef FERRY_CSQLCIPHER_SHIM_H
#define FERRY_CSQLCIPHER_SHIM_H
// SQLCipher 4.6.1 as installed by scripts/setup (under /usr/local). The explicit <sqlcipher/...> path
// never picks up the system's /usr/include/sqlite3.h by accident.
#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>

#if SQLITE_VERSION_NUMBER < 3046000
#error "Ferry needs SQLCipher 4.6.1 (SQLite >= 3.46): run scripts/setup (found an older sqlcipher/sqlite3.h)"
#endif

/// The cipher build this header belongs to (checked at run time against the loaded library).
#define FERRY_HAS_CODEC 1

/// sqlite3_config is variadic and cannot be called from Swift: this installs the global error log.
static inline int ferry_sqlite3_config_log(void (*callback)(void *, int, const char *), void *context) {
    return sqlite3_config(SQLITE_CONFIG_LOG, callback, context);
}

/// sqlite3_db_config is variadic too: this sizes a connection's lookaside memory (SQLite's own
/// slots for small allocations), right after it opens.
static inline int ferry_sqlite3_db_config_lookaside(sqlite3 *db, int slotSize, int slotCount) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_LOOKASIDE, (void *)0, slotSize, slotCount);
}
#endif
