#ifndef FERRY_CSQLITE_SHIM_H
#define FERRY_CSQLITE_SHIM_H
// Debian's libsqlite3 (3.40.1): plain databases only.
#include <sqlite3.h>

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
